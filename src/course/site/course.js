// Draw the lesson's mermaid diagrams once the page has loaded (the library is served from site_libs/).
document.addEventListener("DOMContentLoaded", function () {
  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "default", flowchart: { useMaxWidth: false }, sequence: { useMaxWidth: false } });
    window.mermaid.run({ querySelector: "pre.mermaid" });
  }
});
