// What Quarto's pages need from the course beyond Quarto's own scripts (the course's filter loads this on every
// page, after mermaid-options.js):
// * mermaid diagrams drawn as the pandoc pages draw them (course.js: mermaid.run with mermaid-options.js): Quarto's
//   own drawing (at the window's load event, each diagram rendered inside its <pre>) measures a group's title at
//   a fixed 200 px and cuts it off, so the diagrams leave Quarto's list (class mermaid-js) before that event;
// * opened from file://, where a browser refuses the fetch of search.json that Quarto's search needs (it would
//   answer "no results" to every word), the search box gives way to a note that it needs the site's address.
(function () {
  if (window.mermaid && window.COURSE_MERMAID) {
    document.querySelectorAll("pre.mermaid.mermaid-js").forEach(function (pre) { pre.classList.remove("mermaid-js"); });
    window.mermaid.initialize(window.COURSE_MERMAID);
    window.mermaid.run({ querySelector: "pre.mermaid" });
  }
  if (window.location.protocol !== "file:") return;
  var NEEDS_ADDRESS = "从本地文件打开时不能搜索：请用网址打开本站（例如在站点文件夹里运行 python3 -m http.server，"
    + "或在课程仓库里运行 course preview），再搜索。";
  function explain() {
    document.querySelectorAll("#quarto-search").forEach(function (search) {
      var note = document.createElement("p");
      note.className = "course-search-file-note";
      note.setAttribute("role", "note");
      note.textContent = NEEDS_ADDRESS;
      search.hidden = true;
      search.style.display = "none";
      search.parentNode.insertBefore(note, search.nextSibling);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", explain);
  else explain();
})();
