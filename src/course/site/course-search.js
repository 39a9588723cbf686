// The site's search box: the index built at `course build` (site_libs/search-index.js) is loaded from a script, not
// fetched, so searching works from file:// as from a server, with no network.
(function () {
  var LIMIT = 12, AROUND = 40;

  // The words of the query, longest first (so that a longer word is marked whole where a shorter one is in it).
  function words(query) {
    return query.toLowerCase().split(/\s+/).filter(Boolean).sort(function (a, b) { return b.length - a.length; });
  }

  function excerpt(text, query) {
    var lower = text.toLowerCase(), at = -1;
    words(query).forEach(function (w) { var i = lower.indexOf(w); if (i >= 0 && (at < 0 || i < at)) at = i; });
    if (at < 0) return text.slice(0, 2 * AROUND) + (text.length > 2 * AROUND ? "…" : "");
    var start = Math.max(0, at - AROUND), end = Math.min(text.length, at + AROUND + AROUND);
    return (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
  }

  // TEXT into ELEMENT as text nodes, each word of the query in it inside a <mark> (as Quarto's search marks them).
  function marked(element, text, query) {
    var lower = text.toLowerCase(), list = words(query), pos = 0;
    while (pos < text.length) {
      var at = -1, len = 0;
      list.forEach(function (w) { var i = lower.indexOf(w, pos); if (i >= 0 && (at < 0 || i < at)) { at = i; len = w.length; } });
      if (at < 0) break;
      element.appendChild(document.createTextNode(text.slice(pos, at)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(at, at + len);
      element.appendChild(mark);
      pos = at + len;
    }
    element.appendChild(document.createTextNode(text.slice(pos)));
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
    marked(text, excerpt(hit.text, query), query);
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
