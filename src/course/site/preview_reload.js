// course preview: reload this page once a rebuild has finished. The preview server adds this script to the pages it
// serves (never to the built files) with __VERSION__ set to the site's version at the time the page was served.
(() => {
  const served = "__VERSION__";
  setInterval(async () => {
    try {
      const now = await (await fetch("/__course_preview__/version", { cache: "no-store" })).text();
      if (now !== served) location.reload();
    } catch {
      // the preview is stopped or busy: keep the page as it is and ask again
    }
  }, 500);
})();
