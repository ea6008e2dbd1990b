"""The text encoding of a file from its first bytes (a byte-order mark, or the NUL bytes of
UTF-16 text without one), and whether a file starts as text at all (`looks_like_text`: a
plain text file named `.gz` is read as the text it is). Bytes of a UTF-16/UTF-32 file that do
not decode are kept as bytes no UTF-8 text holds (`UNDECODABLE`), so their line is
quarantined as not valid text in the file's encoding."""

from __future__ import annotations

import codecs

BOMS = (  # longest first: the UTF-32 LE BOM starts like the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
UNDECODABLE = "duplirank-undecodable"


def _undecodable(err: UnicodeDecodeError) -> tuple[str, int]:
    """Bytes of a UTF-16/UTF-32 file that do not decode become bytes no UTF-8 text holds
    (0xFF, by `surrogateescape` when re-encoded): their line is quarantined as not valid text
    in the file's encoding. (`surrogateescape` alone raises on a sequence holding a byte
    below 0x80, e.g. `\\xff\\xfe\\x00\\x00{…`: UTF-32 by its BOM, UTF-16 in fact.)"""
    return "\udcff" * (err.end - err.start), err.end


codecs.register_error(UNDECODABLE, _undecodable)


def looks_like_text(head: bytes) -> bool:
    """The start of a file is text: its first KiB decodes (a character may be cut at the end)
    and holds no control byte but tab, CR and LF."""
    sample = head[:1024]
    if not sample or sniff_encoding(sample) not in (None, "utf-8"):
        return bool(sample)  # UTF-16/32 text (by its BOM or NULs) is text too
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(sample) - 3:
            return False
        text = sample[: err.start].decode("utf-8")
    return not any(c < " " and c not in "\t\r\n" for c in text)


def sniff_encoding(head: bytes) -> str | None:
    """The encoding of text starting with `head`: by its BOM, or UTF-16 by the NUL bytes of
    its ASCII characters; None for anything else (read as UTF-8, line by line)."""
    for bom, name in BOMS:
        if head.startswith(bom):
            return name if not name.startswith("utf-32") or _is_utf32(head) else _utf16(name)
    sample = head[:4096]
    if len(sample) >= 4 and sample.count(0) >= len(sample) // 3:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd > 2 * max(even, 1) and sample[0] != 0:
            return "utf-16-le"
        if even > 2 * max(odd, 1) and sample[1] != 0:
            return "utf-16-be"
    return None


def _is_utf32(head: bytes) -> bool:
    """The UTF-32 LE BOM is the UTF-16 LE BOM followed by a NUL character: UTF-32 only when
    the start decodes as UTF-32 (a character cut at the end of the sample allowed)."""
    sample = head[: min(len(head), 4096) // 4 * 4]
    try:
        sample.decode("utf-32")
    except UnicodeDecodeError:
        return False
    return True


def _utf16(utf32: str) -> str:
    return utf32.replace("32", "16")
