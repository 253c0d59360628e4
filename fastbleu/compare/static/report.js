/* fastbleu report: exports (CSV/JSON of every chart's numbers), example search, printing.
   No network: everything comes from the page's own data. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);

  function csvField(value) {
    if (value === null || value === undefined) { return ""; }
    var text = typeof value === "object" ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function csv(records) {
    var columns = [];
    records.forEach(function (record) {
      Object.keys(record).forEach(function (key) {
        if (columns.indexOf(key) < 0) { columns.push(key); }
      });
    });
    var lines = [columns.map(csvField).join(",")];
    records.forEach(function (record) {
      lines.push(columns.map(function (key) { return csvField(record[key]); }).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }

  function exportText(key, format) {
    var records = data.exports[key];
    return format === "csv" ? csv(records) : JSON.stringify(records, null, 2) + "\n";
  }

  function download(name, text, type) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 0);
  }

  Array.prototype.forEach.call(document.querySelectorAll("button[data-export]"), function (button) {
    button.addEventListener("click", function () {
      var key = button.getAttribute("data-export");
      var format = button.getAttribute("data-format");
      download(key + "." + format, exportText(key, format),
               format === "csv" ? "text/csv;charset=utf-8" : "application/json");
    });
  });

  var search = document.getElementById("example-search");
  if (search) {
    var rows = document.querySelectorAll("#examples tbody tr");
    var status = document.getElementById("example-count");
    search.addEventListener("input", function () {
      var query = search.value.toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var hit = !query || row.textContent.toLowerCase().indexOf(query) >= 0;
        row.hidden = !hit;
        if (hit) { shown += 1; }
      });
      status.textContent = shown + " of " + rows.length + " examples shown";
    });
  }

  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  });

  window.fastbleuReport = { data: data, csv: csv, exportText: exportText };
}());
