/* lessonkit portfolio files: the one check of what a browser saved or a person imports, shared
   by the lesson page (lessonkit.js) and "My learning" (my-learning.js); both pages load this
   file first. Every reason it gives completes "<file> ..." in a message a person can act on. */
(() => {
  "use strict";

  const KEY_PATTERN = /^[a-z0-9][a-z0-9:_-]{0,119}$/;
  const MAX_TEXT = 200000;

  function usableValue(value) {
    if (typeof value === "string") return value.length <= MAX_TEXT;
    if (typeof value === "boolean") return true;
    if (typeof value === "number") return Number.isFinite(value);
    return Array.isArray(value) && value.length <= 50 && value.every(Number.isInteger);
  }

  function isoOr(text, fallback) {
    const time = typeof text === "string" ? Date.parse(text) : NaN;
    return Number.isNaN(time) ? fallback : new Date(time).toISOString();
  }

  const shorten = (text) => {
    const shown = String(text);
    return shown.length > 40 ? `${shown.slice(0, 40)}\u2026` : shown;
  };

  /* A JSON object of portfolio schema `schema`: {parsed} or {error}. */
  function parse(text, schema) {
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { error: "is not valid JSON" };
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      return { error: "is not a JSON object" };
    }
    if (parsed.schema !== schema) {
      return { error: `is not a lessonkit portfolio (its schema is ${shorten(JSON.stringify(parsed.schema) ?? "missing")}, expected "${schema}")` };
    }
    return { parsed };
  }

  /* One lesson's entries as {key: {value, updated}}: {entries, saved} or {error}. A bare value
     (an entry without its time) is dated by `saved`, the time the whole portfolio was saved. */
  function checkEntries(source, saved) {
    if (!source || typeof source !== "object" || Array.isArray(source)) {
      return { error: "has no \u201centries\u201d object" };
    }
    const fallback = isoOr(saved, new Date(0).toISOString());
    const entries = {};
    for (const [key, raw] of Object.entries(source)) {
      if (!KEY_PATTERN.test(key)) return { error: `has an entry named ${shorten(JSON.stringify(key))} that no lesson page uses` };
      const wrapped = raw !== null && typeof raw === "object" && !Array.isArray(raw);
      const value = wrapped ? raw.value : raw;
      if (!usableValue(value)) return { error: `has an entry ${shorten(JSON.stringify(key))} whose value this page cannot use` };
      entries[key] = { value, updated: wrapped ? isoOr(raw.updated, fallback) : fallback };
    }
    return { entries, saved: fallback };
  }

  window.lessonkitPortfolio = Object.freeze({ parse, checkEntries, shorten });
})();
