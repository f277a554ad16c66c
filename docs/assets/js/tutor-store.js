/*
 * Versioned, schema-checked persistence for the learner tools (planner, cards).
 * Pure apart from the storage object passed in, so Node tests can hand it a fake.
 * A saved value is an envelope {app, version, savedAt, data}; anything else found
 * under the key (corrupt JSON, another app's data, a newer version, data that fails
 * the schema) is set aside under KEY + ".rejected" and replaced by a fresh state, and
 * the caller gets a notice to show.
 */
(function (root) {
  "use strict";

  function envelope(app, version, data, now) {
    return { app: app, version: version, savedAt: new Date(now || Date.now()).toISOString(), data: data };
  }

  /**
   * Check a parsed envelope. Returns {ok: true, data} or {ok: false, reason}.
   * validate(data) returns a list of problems (empty when the data is sound).
   */
  function checkEnvelope(obj, app, version, validate) {
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
      return { ok: false, reason: "it is not a saved-progress object" };
    }
    if (obj.app !== app) {
      return { ok: false, reason: "it belongs to " + (typeof obj.app === "string" ? "'" + obj.app + "'" : "another tool") };
    }
    if (obj.version !== version) {
      return { ok: false, reason: "it has format version " + String(obj.version) + ", this page reads version " + version };
    }
    var problems = validate(obj.data);
    if (problems.length) return { ok: false, reason: problems[0] };
    return { ok: true, data: obj.data };
  }

  function parse(text, app, version, validate) {
    var obj;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      return { ok: false, reason: "it is not valid JSON" };
    }
    return checkEnvelope(obj, app, version, validate);
  }

  /**
   * Load state from storage. Returns {data, notice}. notice is null when all went
   * well (including "nothing saved yet"), else a sentence for the learner.
   */
  function load(storage, key, app, version, validate, fresh) {
    var raw;
    try {
      raw = storage ? storage.getItem(key) : null;
    } catch (e) {
      return { data: fresh(), notice: "This browser does not allow saving here, so progress will last only until the page is closed." };
    }
    if (raw === null || raw === undefined) return { data: fresh(), notice: null };
    var result = parse(raw, app, version, validate);
    if (result.ok) return { data: result.data, notice: null };
    try {
      storage.setItem(key + ".rejected", raw);
      storage.removeItem(key);
    } catch (e) { /* nothing more to do */ }
    return {
      data: fresh(),
      notice: "Saved progress could not be used (" + result.reason + ") and was reset. " +
        "The old value was kept in this browser under '" + key + ".rejected'."
    };
  }

  /** Save; returns null on success or a sentence describing the failure. */
  function save(storage, key, app, version, data, now) {
    try {
      storage.setItem(key, JSON.stringify(envelope(app, version, data, now)));
      return null;
    } catch (e) {
      return "Progress could not be saved in this browser (" + (e && e.name ? e.name : "storage error") + ").";
    }
  }

  function isPlainObject(x) {
    return x !== null && typeof x === "object" && !Array.isArray(x);
  }

  var api = {
    envelope: envelope,
    checkEnvelope: checkEnvelope,
    parse: parse,
    load: load,
    save: save,
    isPlainObject: isPlainObject
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TutorStore = api;
})(typeof window !== "undefined" ? window : this);
