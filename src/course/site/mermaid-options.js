// The course's one look for mermaid diagrams, on the pandoc pages (course.js), Quarto's (course-quarto.js) and in
// formgrader: mermaid's own default theme (dark text on light boxes), labels wrapped at 420 px so that long
// titles stay on one line, and each diagram no wider than the text column (it scales down on a phone).
window.COURSE_MERMAID = {
  startOnLoad: false,
  securityLevel: "strict",
  theme: "default",
  flowchart: { useMaxWidth: true, wrappingWidth: 420 },
  sequence: { useMaxWidth: true }
};
