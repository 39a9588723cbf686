// Draw the lesson's mermaid diagrams once the page has loaded (the library is served from site_libs/), the course's way.
document.addEventListener("DOMContentLoaded", function () {
  if (window.mermaid) {
    window.mermaid.initialize(window.COURSE_MERMAID);  // mermaid-options.js
    window.mermaid.run({ querySelector: "pre.mermaid" });
  }
});

// On a narrow screen the lesson list and the table of contents stand above the text (course.css): start them
// collapsed there.
document.addEventListener("DOMContentLoaded", function () {
  if (!window.matchMedia("(max-width: 800px)").matches) return;
  document.querySelectorAll(".sidebar details").forEach(function (details) { details.open = false; });
});
