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

// The "在浏览器中运行" block (course.site.lite_page): JupyterLite cannot start from a file on disk, so say so there;
// over http, look in the browser's JupyterLite storage for this lesson's work saved under an older release (another
// v-… folder) and tell the student it is still there, since the link now opens the new release.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".lite-launch").forEach(function (block) {
    if (location.protocol === "file:") {
      var note = document.createElement("p");
      note.className = "lite-note lite-file-note";
      note.textContent = "“在浏览器中运行”需要通过网址打开课程网站（http:// 或 https://），直接打开的本地文件（file://）" +
        "里不能运行 notebook：请打开课程网站的网址，或在课程仓库里运行 course preview 并打开它给出的地址。";
      block.appendChild(note);
      return;
    }
    showOlderReleases(block);
  });
});

function showOlderReleases(block) {
  var name = block.dataset.litePath ? block.dataset.liteStorage : null;
  if (!name || !window.indexedDB || !indexedDB.databases) return;
  indexedDB.databases().then(function (all) {
    if (!all.some(function (db) { return db.name === name; })) return;  // never opened here: open nothing (no empty db)
    var request = indexedDB.open(name);
    request.onsuccess = function () {
      var db = request.result;
      if (!db.objectStoreNames.contains("files")) { db.close(); return; }
      var keys = db.transaction("files", "readonly").objectStore("files").getAllKeys();
      keys.onsuccess = function () {
        db.close();
        var prefix = block.dataset.liteStem + "/v-", current = block.dataset.litePath;
        var older = keys.result.filter(function (key) {
          return typeof key === "string" && key.indexOf(prefix) === 0 && /\.ipynb$/.test(key) && key !== current;
        });
        if (!older.length) return;
        var note = document.createElement("p");
        note.className = "lite-note lite-new-release";
        note.appendChild(document.createTextNode("本作业已发布新版本，上面的链接打开新版本。你在这个浏览器里保存的旧版本作业没有被覆盖，仍然可以打开："));
        older.forEach(function (key, i) {
          var link = document.createElement("a");
          link.href = "lite/notebooks/index.html?path=" + key;
          link.textContent = "旧版本（" + key.split("/")[1] + "）";
          if (i) note.appendChild(document.createTextNode("、"));
          note.appendChild(link);
        });
        note.appendChild(document.createTextNode("。把你写好的代码和答案复制到新版本中，再下载新版本提交。"));
        block.appendChild(note);
      };
    };
  }).catch(function () {});
}
