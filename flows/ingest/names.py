"""The stored text of a file's name (ingest log, quarantine, bronze `source_file`), and the
bytes of the name back from that text: lossless for any name the file system holds."""

from __future__ import annotations

import os
import re

_UNDECODED = re.compile("[\udc80-\udcff]")
_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|\\)")


def file_text(path: object) -> str:
    """The stored text of a file's name (ingest log, quarantine, bronze `source_file`),
    lossless: its UTF-8 text, each byte that is not part of valid UTF-8 written `\\xHH`
    (two lower-case hex digits) and each backslash doubled (`file_name` reverses it)."""
    text = str(path)
    if "\\" not in text and not _UNDECODED.search(text):
        return text  # every usual name: valid UTF-8, no backslash
    text = text.replace("\\", "\\\\")
    return _UNDECODED.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)


def file_name(text: str) -> bytes:
    """The bytes of a file name from its stored text (`file_text`)."""

    def unescape(match: re.Match) -> str:
        code = match.group(1)
        return "\\" if code == "\\" else chr(0xDC00 + int(code[1:], 16))

    return os.fsencode(_ESCAPE.sub(unescape, text))
