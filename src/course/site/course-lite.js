// The "在浏览器中运行" block (course.site.lite_page), on the pandoc pages (page.html loads this file from site_libs/)
// and on Quarto's (the block itself loads it, course.workflows.quarto_hooks). JupyterLite cannot start from a file on
// disk: say so there.
// Over http: JupyterLite keeps a student's saved notebook in this browser (IndexedDB) and shows it instead of the
// site's file of the same name, so after a re-release the link still opens the old work. When the saved copy's
// read-only cells differ from the site's, say that a new version is out, and offer to keep the work under another
// name (it stays in JupyterLite's file list) and open the new version. The site's lite/ is found from the block's
// link (lite/notebooks/index.html?path=…), wherever the page lies: lite/… on the pandoc site, ../lite/… on Quarto's
// pages in lessons/. Once known, the block's data-lite-saved says what this browser holds: none (no saved copy),
// current (a copy of the site's release), old (of an earlier release: the note is shown) or unknown (no release read).
(function () {  // the page's scripts share one global scope: these names stay in this file
  var LITE_FILE_NOTE = "“在浏览器中运行”需要通过网址打开课程网站（http:// 或 https://），直接打开的本地文件（file://）" +
    "里不能运行 notebook：请打开课程网站的网址，或在课程仓库里运行 course preview 并打开它给出的地址。";

  function liteFileNote(tag) {  // the note a link to JupyterLite carries on a page opened from disk
    var note = document.createElement(tag);
    note.className = "lite-note lite-file-note";
    note.textContent = LITE_FILE_NOTE;
    return note;
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (location.protocol === "file:") {  // the index's links (course.site.lite_page.index_link) carry it too
      document.querySelectorAll("a.lite-index-link").forEach(function (link) {
        link.parentNode.insertBefore(liteFileNote("span"), link.nextSibling);
      });
    }
    document.querySelectorAll(".lite-launch").forEach(function (block) {
      if (location.protocol === "file:") {
        block.appendChild(liteFileNote("p"));
        return;
      }
      var found = function (what) { block.dataset.liteSaved = what; };  // what the comparison found, once known
      liteSavedCopy(block.dataset.liteStorage, function (store) {
        store.get(block.dataset.litePath, function (saved) {
          if (!saved || !saved.content) return found("none");
          fetch(liteFile(block, block.dataset.litePath), { cache: "no-cache" }).then(function (r) {
            return r.json();
          }).then(function (release) {
            if (lockedCells(saved.content) === lockedCells(release)) return found("current");
            offerNewRelease(block, store, saved);
            found("old");
          }).catch(function () { found("unknown"); });
        });
      }, function () { found("none"); });
    });
  });

  function liteFile(block, path) {  // lite/files/PATH, beside the notebooks/ the block's link opens
    return new URL("../files/" + path, block.querySelector("a.lite-link").href).href;
  }
  window.liteFile = liteFile;  // the one name the page shares: which file a saved copy is compared with

  function lockedCells(notebook) {  // what a release fixes: its read-only cells, in order
    return JSON.stringify((notebook.cells || []).filter(function (c) {
      return c.metadata && c.metadata.nbgrader && c.metadata.nbgrader.locked;
    }).map(function (c) { return [c.metadata.nbgrader.grade_id, [].concat(c.source).join("")]; }));
  }

  function liteSavedCopy(name, then, none) {  // JupyterLite's "files" store if this browser has one (never create it)
    if (!name || !window.indexedDB || !indexedDB.databases) return none();
    indexedDB.databases().then(function (all) {
      if (!all.some(function (db) { return db.name === name; })) return none();
      var request = indexedDB.open(name);
      request.onerror = none;
      request.onsuccess = function () {
        var db = request.result;
        if (!db.objectStoreNames.contains("files")) return none();
        then({
          get: function (key, done) {
            var got = db.transaction("files", "readonly").objectStore("files").get(key);
            got.onsuccess = function () { done(got.result); };
          },
          rename: function (model, key, done) {
            var tx = db.transaction("files", "readwrite"), files = tx.objectStore("files");
            files.put(Object.assign({}, model, { name: key, path: key }), key);
            files.delete(model.path);
            tx.oncomplete = done;
          }
        });
      };
    }).catch(none);
  }

  function offerNewRelease(block, store, saved) {
    var stamp = new Date().toISOString().slice(0, 16).replace(/[-:T]/g, "");
    var keep = saved.path.replace(/\.ipynb$/, "") + "-old-" + stamp + ".ipynb";
    var note = document.createElement("p");
    note.className = "lite-note lite-new-release";
    note.appendChild(document.createTextNode("本作业已发布新版本。上面的链接现在打开的仍是你在这个浏览器里保存的旧版本作业" +
      "（它没有被新版本覆盖）。要换到新版本："));
    var button = document.createElement("button");
    button.type = "button";
    button.className = "lite-keep-old";
    button.dataset.keepAs = keep;
    button.textContent = "把旧版本作业另存为 " + keep + "，打开新版本";
    button.addEventListener("click", function () {
      store.rename(saved, keep, function () { location.href = block.querySelector("a.lite-link").href; });
    });
    note.appendChild(button);
    note.appendChild(document.createTextNode("（旧版本仍在 JupyterLite 的文件列表里，可以把写好的代码和答案复制到新版本中，再下载新版本提交）。"));
    block.appendChild(note);
  }
})();
