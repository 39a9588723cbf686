// How the course's search cuts text into terms, shared by the index builder (node, at `course build`) and the pages.
// Chinese has no spaces between words: a run of Han characters gives its overlapping two-character pieces (a lone
// character gives itself), so a phrase is found wherever its pieces all occur; other text gives its words, lowercased.
(function (root, make) {
  if (typeof module === "object" && module.exports) module.exports = make();
  else root.COURSE_SEARCH_OPTIONS = make();
})(this, function () {
  var RUN = /[\p{Script=Han}]+|[\p{L}\p{N}_]+/gu;
  var HAN = /^\p{Script=Han}/u;

  function tokenize(text) {
    var terms = [];
    var runs = String(text).match(RUN) || [];
    for (var i = 0; i < runs.length; i++) {
      var run = runs[i];
      if (!HAN.test(run)) { terms.push(run); continue; }
      var chars = Array.from(run);
      if (chars.length === 1) { terms.push(run); continue; }
      for (var j = 0; j + 1 < chars.length; j++) terms.push(chars[j] + chars[j + 1]);
    }
    return terms;
  }

  return {
    idField: "url",
    fields: ["heading", "text"],
    storeFields: ["url", "page", "heading", "text"],
    tokenize: tokenize,
    processTerm: function (term) { return term.toLowerCase(); },
    // a word may be the start of a longer one; so may a lone Han character (the pieces it begins)
    searchOptions: { combineWith: "AND", boost: { heading: 2 },
                     prefix: function (term) { return !HAN.test(term) || Array.from(term).length === 1; } }
  };
});
