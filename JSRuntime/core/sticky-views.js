// core/sticky-views.js
// Contract: `__optimization.stickyViews` — sticky entry-view de-duplication.
// A view of a sticky selection goes to the Experience API once per key (the bridge keys it
// by `stickyTrackingKey ?? viewId`); later views of the same key are sent as plain views.
//   shouldSendStickyEntryView(sticky, alreadyAccepted) → sticky === true && !alreadyAccepted
//   shouldRememberStickyEntryView(stickySent, accepted) → stickySent === true && accepted === true
//   createStickyViewKeys() → {has(key), remember(key), clear(), size}   the accepted keys.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/sticky-views.js', { provides: ['stickyViews'] });

  function shouldSendStickyEntryView(sticky, alreadyAccepted) {
    return sticky === true && !alreadyAccepted;
  }

  function shouldRememberStickyEntryView(stickySent, accepted) {
    return stickySent === true && accepted === true;
  }

  function createStickyViewKeys() {
    var keys = new Set();
    return {
      has: function (key) {
        return keys.has(key);
      },
      remember: function (key) {
        keys.add(key);
      },
      clear: function () {
        keys.clear();
      },
      get size() {
        return keys.size;
      },
    };
  }

  ns.stickyViews = {
    shouldSendStickyEntryView: shouldSendStickyEntryView,
    shouldRememberStickyEntryView: shouldRememberStickyEntryView,
    createStickyViewKeys: createStickyViewKeys,
  };
})();
