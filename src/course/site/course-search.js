// The site's search box: the index built at `course build` (site_libs/search-index.js) is loaded from a script, not
// fetched, so searching works from file:// as from a server, with no network.
(function () {
  var LIMIT = 12, AROUND = 40;

  function excerpt(text, query) {
    var at = text.indexOf(query);
    if (at < 0) return text.slice(0, 2 * AROUND) + (text.length > 2 * AROUND ? "…" : "");
    var start = Math.max(0, at - AROUND), end = Math.min(text.length, at + query.length + AROUND);
    return (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
  }

  function item(hit, query) {
    var li = document.createElement("li");
    var a = document.createElement("a");
    a.href = hit.url;
    var where = document.createElement("span");
    where.className = "search-where";
    where.textContent = hit.page + (hit.heading && hit.heading !== hit.page ? " › " + hit.heading : "");
    var text = document.createElement("span");
    text.className = "search-excerpt";
    text.textContent = excerpt(hit.text, query);
    a.appendChild(where);
    a.appendChild(text);
    li.appendChild(a);
    return li;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var input = document.getElementById("course-search");
    var list = document.getElementById("course-search-results");
    var status = document.getElementById("course-search-status");
    if (!input || !window.MiniSearch || !window.COURSE_SEARCH_INDEX) return;
    var index = window.MiniSearch.loadJSON(window.COURSE_SEARCH_INDEX, window.COURSE_SEARCH_OPTIONS);

    function show() {
      var query = input.value.trim();
      list.textContent = "";
      if (!query) { list.hidden = true; status.textContent = ""; return; }
      var hits = index.search(query).slice(0, LIMIT);
      hits.forEach(function (hit) { list.appendChild(item(hit, query)); });
      list.hidden = hits.length === 0;
      status.textContent = hits.length ? "找到 " + hits.length + " 处" : "没有找到“" + query + "”";
    }

    input.addEventListener("input", show);
    input.addEventListener("keydown", function (event) {
      var first = list.querySelector("a");
      if (event.key === "Enter" && first) window.location.href = first.href;
      if (event.key === "Escape") { input.value = ""; show(); }
    });
  });
})();
