// tests/sticky-views.spec.js — sticky entry-view de-duplication rules.
(function () {
  'use strict';
  var sticky = globalThis.__optimization.stickyViews;

  jsTest('a sticky entry view is sent only when sticky and not yet accepted, and remembered only when sent sticky and accepted', function () {
    assert.equal(sticky.shouldSendStickyEntryView(true, false), true);
    assert.equal(sticky.shouldSendStickyEntryView(true, true), false);
    assert.equal(sticky.shouldSendStickyEntryView(false, false), false);
    assert.equal(sticky.shouldSendStickyEntryView(undefined, false), false);
    assert.equal(sticky.shouldRememberStickyEntryView(true, true), true);
    assert.equal(sticky.shouldRememberStickyEntryView(true, false), false);
    assert.equal(sticky.shouldRememberStickyEntryView(false, true), false);
  });

  jsTest('sticky view keys remember, answer and clear', function () {
    var keys = sticky.createStickyViewKeys();
    assert.equal(keys.has('k'), false);
    keys.remember('k');
    assert.equal(keys.has('k'), true);
    assert.equal(keys.size, 1);
    keys.clear();
    assert.equal(keys.has('k'), false);
  });
})();
