// Draw the lesson's mermaid diagrams once the page has loaded (the library is served from site_libs/).
document.addEventListener("DOMContentLoaded", function () {
  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "default", flowchart: { useMaxWidth: true, wrappingWidth: 420 }, sequence: { useMaxWidth: true } });
    window.mermaid.run({ querySelector: "pre.mermaid" });
  }
});

// On a narrow screen the lesson list and the table of contents stand above the text (course.css): start them
// collapsed there.
document.addEventListener("DOMContentLoaded", function () {
  if (!window.matchMedia("(max-width: 800px)").matches) return;
  document.querySelectorAll(".sidebar details").forEach(function (details) { details.open = false; });
});
