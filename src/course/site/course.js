// Draw the lesson's mermaid diagrams once the page has loaded (the library is served from site_libs/).
document.addEventListener("DOMContentLoaded", function () {
  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "default", flowchart: { useMaxWidth: true, wrappingWidth: 420 }, sequence: { useMaxWidth: true } });
    window.mermaid.run({ querySelector: "pre.mermaid" });
  }
});

// On a narrow screen the table of contents stands above the text (course.css): start it collapsed there.
document.addEventListener("DOMContentLoaded", function () {
  var toc = document.querySelector("#TOC details");
  if (toc && window.matchMedia("(max-width: 800px)").matches) toc.open = false;
});
