// A figure shown at the text column's width (on a phone, about 360 px) opens at full size: each figure's image is a
// link to the image (a tap, a click, or Enter on it), opened in a dialog that scrolls both ways; Esc, the close
// button or a tap beside the image closes it and gives the focus back to the link. The same on the pandoc pages
// (page.html) and Quarto's (the course's filter loads it), for images drawn from files and by cells alike.
(function () {
  var FIGURES = "main figure img, main .img-card img, main .cell-output-display img";
  var OPEN_LABEL = "查看原图：", CLOSE_LABEL = "关闭";

  function caption(img) {
    var holder = img.closest("figure, .cell, .img-card");
    var text = holder && holder.querySelector("figcaption, .figure-caption");
    return (text && text.textContent.trim()) || img.alt || "";
  }

  function show(img, link) {
    var dialog = document.createElement("dialog");
    dialog.className = "figure-viewer";
    dialog.setAttribute("aria-label", OPEN_LABEL + caption(img));
    var close = document.createElement("button");
    close.type = "button";
    close.className = "figure-viewer-close";
    close.textContent = CLOSE_LABEL;
    var full = document.createElement("img");
    full.src = img.currentSrc || img.src;
    full.alt = img.alt;
    dialog.appendChild(close);
    dialog.appendChild(full);
    document.body.appendChild(dialog);
    close.addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("click", function (event) { if (event.target === dialog) dialog.close(); });
    dialog.addEventListener("close", function () { dialog.remove(); link.focus(); });
    dialog.showModal();
  }

  function linkFigures() {
    document.querySelectorAll(FIGURES).forEach(function (img) {
      if (img.closest("a")) return;
      var link = document.createElement("a");
      link.className = "figure-link";
      link.href = img.getAttribute("src");
      link.title = OPEN_LABEL + caption(img);
      img.parentNode.insertBefore(link, img);
      link.appendChild(img);
      link.addEventListener("click", function (event) { event.preventDefault(); show(img, link); });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", linkFigures);
  else linkFigures();
})();
