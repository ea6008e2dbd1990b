/* Sorting and filtering of the tables marked "sortable" and of the filter forms. Tables are
   complete without it; this only reorders or hides rows already in the page. */
(function () {
  "use strict";
  var collator = new Intl.Collator(document.documentElement.lang || undefined,
                                   {numeric: true, sensitivity: "base"});
  function key(cell) {
    var k = cell.getAttribute("data-sort");
    return k === null ? cell.textContent.trim() : k;
  }
  function asNumber(text) {
    var t = text.replace(/[\s\u202f\u00a0]/g, "").replace(",", ".").replace("\u2212", "-");
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? parseFloat(t) : NaN;
  }
  function isMissing(text) { return text === "" || text === "\u2013"; }
  function sortTable(table, index, direction) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keys = rows.map(function (row) { return key(row.cells[index]); });
    var numeric = keys.every(function (k) { return isMissing(k) || !isNaN(asNumber(k)); });
    var order = rows.map(function (row, i) { return i; });
    var sign = direction === "ascending" ? 1 : -1;
    order.sort(function (a, b) {
      var ka = keys[a], kb = keys[b];
      if (isMissing(ka) || isMissing(kb)) {  // missing values last in both directions
        return isMissing(ka) === isMissing(kb) ? 0 : (isMissing(ka) ? 1 : -1);
      }
      var c = numeric ? asNumber(ka) - asNumber(kb) : collator.compare(ka, kb);
      return sign * c;  // Array.prototype.sort is stable: ties keep the previous order
    });
    var fragment = document.createDocumentFragment();
    order.forEach(function (i) { fragment.appendChild(rows[i]); });
    body.appendChild(fragment);
    var headers = table.tHead.rows[0].cells;
    for (var h = 0; h < headers.length; h++) {
      if (h === index) { headers[h].setAttribute("aria-sort", direction); }
      else { headers[h].removeAttribute("aria-sort"); }
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        var next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        sortTable(table, index, next);
      });
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("form.filter"), function (form) {
    var input = form.querySelector("input");
    var output = form.querySelector("output");
    var table = document.getElementById(input.getAttribute("data-table"));
    var columns = input.getAttribute("data-columns").split(",").map(Number);
    function apply() {
      var query = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var match = query === "" || columns.some(function (c) {
          return row.cells[c].textContent.toLowerCase().indexOf(query) !== -1;
        });
        row.hidden = !match;
        if (match) { shown++; }
      });
      output.textContent = String(shown);
    }
    form.hidden = false;
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    input.addEventListener("input", apply);
    var wanted = new URLSearchParams(window.location.search).get("player");
    if (wanted) { input.value = wanted; }
    apply();
  });
})();
