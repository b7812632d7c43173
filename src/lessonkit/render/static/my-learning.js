/* lessonkit "My learning": every lesson's browser-saved portfolio on one page, exported and
   imported together. Each lesson's work stays under the key its own page uses, so the lesson
   pages keep working unchanged. Learner text only ever goes into .textContent. */
(() => {
  "use strict";

  const data = JSON.parse(document.getElementById("learning-data").textContent);
  const $ = (selector) => document.querySelector(selector);
  const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const now = () => new Date().toISOString();
  const { parse, checkEntries, shorten } = window.lessonkitPortfolio;
  const MAX_FILE = 20000000;
  const byId = new Map(data.lessons.map((lesson) => [lesson.id, lesson]));

  function element(tag, text) {
    const node = document.createElement(tag);
    node.textContent = text;
    return node;
  }

  function warn(text) {
    const warning = $("#storage-warning");
    warning.textContent = text;
    warning.hidden = false;
  }

  function read(key) {
    try {
      return window.localStorage.getItem(key);
    } catch (error) {
      warn(`This browser does not let the page read its storage (${error.name}): nothing saved can be shown.`);
      return null;
    }
  }

  function write(key, value) {
    try {
      window.localStorage.setItem(key, value);
      return true;
    } catch (error) {
      warn(`This browser did not save the import (${error.name}): storage is disabled or full.`);
      return false;
    }
  }

  function stored(lesson) {
    const raw = read(lesson.storageKey);
    if (raw === null) return { saved: null, entries: {} };
    try {
      const parsed = JSON.parse(raw);
      const checked = checkEntries(parsed.entries, parsed.saved);
      if (!checked.error) return { saved: parsed.saved || null, entries: checked.entries };
    } catch (error) {
      // shown below as unreadable; the lesson page keeps a copy when it next opens
    }
    return { saved: null, entries: {}, unreadable: true };
  }

  /* A file: {lessons: {id: {saved, entries}}} for version 2, or a one-lesson file (version 1). */
  function parseFile(text) {
    const opened = parse(text, data.schema);
    if (opened.error) return opened;
    const parsed = opened.parsed;
    let lessons;
    if (parsed.version === data.version) {
      if (!parsed.lessons || typeof parsed.lessons !== "object" || Array.isArray(parsed.lessons)) {
        return { error: "has no \u201clessons\u201d object" };
      }
      lessons = parsed.lessons;
    } else if (parsed.version === data.lessonVersion) {
      if (typeof parsed.lesson !== "string") return { error: "names no lesson" };
      lessons = { [parsed.lesson]: { saved: parsed.saved, entries: parsed.entries } };
    } else {
      return { error: `has portfolio version ${shorten(JSON.stringify(parsed.version) ?? "missing")}; this page reads versions ${data.lessonVersion} and ${data.version}` };
    }
    const checked = {};
    const unknown = [];
    for (const [id, part] of Object.entries(lessons)) {
      if (!byId.has(id)) {
        unknown.push(id);
        continue;
      }
      const result = checkEntries(part && part.entries, (part && part.saved) || parsed.saved);
      if (result.error) return { error: `(lesson ${shorten(id)}) ${result.error}` };
      checked[id] = result.entries;
    }
    return { lessons: checked, unknown };
  }

  function describe(lesson, key, value) {
    const quiz = own(lesson.quizzes, key) ? lesson.quizzes[key] : null;
    if (quiz && Number.isInteger(value)) {
      const option = quiz.options[value] ?? `option ${value + 1}`;
      return `${option} (${value === quiz.answer ? "right" : "not right"})`;
    }
    if (key === "progress:stage") return `${value} \u00b7 ${data.stages[value - 1] || ""}`;
    if (key === "progress:done" && Array.isArray(value)) {
      return value.map((n) => `${n} \u00b7 ${data.stages[n - 1] || ""}`).join(", ");
    }
    if (value === true) return "yes";
    const text = String(value);
    return text.length > 400 ? `${text.slice(0, 400)}\u2026` : text;
  }

  function shown(value) {
    return value !== "" && value !== false && !(Array.isArray(value) && value.length === 0);
  }

  function render() {
    let total = 0;
    for (const lesson of data.lessons) {
      const { entries, unreadable } = stored(lesson);
      const keys = Object.keys(entries).filter((key) => shown(entries[key].value));
      total += keys.length;
      const done = own(entries, "progress:done") && Array.isArray(entries["progress:done"].value) ? entries["progress:done"].value.length : 0;
      const tasks = lesson.tasks.filter((key) => own(entries, key) && entries[key].value === true).length;
      const progress = document.querySelector(`[data-progress="${lesson.id}"]`);
      progress.textContent = unreadable
        ? "The work saved for this lesson could not be read; open the lesson page to keep a copy of it."
        : keys.length === 0
          ? "Nothing saved in this browser yet."
          : `${plural(done, "stage", "stages")} of ${data.stages.length} completed \u00b7 ` +
            `${tasks} of ${plural(lesson.tasks.length, "exercise", "exercises")} marked complete \u00b7 ` +
            `${plural(keys.length, "saved entry", "saved entries")}`;
      const rows = [];
      for (const key of keys) {
        rows.push(element("dt", own(lesson.fields, key) ? lesson.fields[key] : key));
        rows.push(element("dd", describe(lesson, key, entries[key].value)));
      }
      document.querySelector(`[data-summary="${lesson.id}"]`).replaceChildren(...rows);
    }
    fileNote(total);
  }

  /* Browsers keep storage for file:// pages differently: Chromium shares it between files,
     Firefox and Safari may keep it per file, and then this page cannot see the lessons' work. */
  /* Text with `command` spans shown as code elements (never as literal backticks). */
  function withCode(element, text) {
    element.replaceChildren();
    text.split("`").forEach((part, index) => {
      if (index % 2 === 1) {
        const code = document.createElement("code");
        code.textContent = part;
        element.append(code);
      } else if (part) {
        element.append(part);
      }
    });
  }

  function fileNote(total) {
    if (location.protocol !== "file:") return;
    const note = $("#file-note");
    note.hidden = false;
    if (total === 0) {
      note.setAttribute("role", "alert");
      withCode(note,
        "This page was opened from a file, and it sees no saved work. If you did work on a lesson page, " +
        "this browser keeps storage per file: run `lessonkit serve` and open the address it prints " +
        "(every page then shares one storage), or export on each lesson page and import the files here.");
    } else {
      withCode(note,
        "Opened from a file: this browser shares saved work between the site's files. Some browsers keep it " +
        "per file instead; `lessonkit serve` works the same everywhere.");
    }
  }

  const message = $("#learning-message");
  function say(text, kind) {
    message.textContent = text;
    message.className = `portfolio-message ${kind}`;
    message.setAttribute("role", kind === "error" ? "alert" : "status");
  }

  $("#learning-export").addEventListener("click", () => {
    const saved = now();
    const lessons = {};
    for (const lesson of data.lessons) {
      const current = stored(lesson);
      if (Object.keys(current.entries).length) lessons[lesson.id] = { saved: current.saved || saved, entries: current.entries };
    }
    const file = { schema: data.schema, version: data.version, saved, lessons };
    const blob = new Blob([`${JSON.stringify(file, null, 2)}\n`], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = `lessonkit-my-learning-${saved.slice(0, 10)}.json`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    say(`Exported ${plural(Object.keys(lessons).length, "lesson", "lessons")} to ${link.download}.`, "ok");
  });

  async function importFile(file) {
    const refuse = (reason) => say(`Nothing was imported: ${file.name} ${reason}. Your saved work is unchanged.`, "error");
    if (file.size > MAX_FILE) return refuse("is larger than a portfolio can be");
    let text;
    try {
      text = await file.text();
    } catch (error) {
      return refuse("could not be read");
    }
    const checked = parseFile(text);
    if (checked.error) return refuse(checked.error);
    const merged = [];
    let changed = 0;
    let kept = 0;
    for (const [id, entries] of Object.entries(checked.lessons)) {
      const lesson = byId.get(id);
      const current = stored(lesson);
      const next = { ...current.entries };
      for (const [key, incoming] of Object.entries(entries)) {
        const here = own(next, key) ? next[key] : null;
        if (here && JSON.stringify(here.value) === JSON.stringify(incoming.value)) continue;
        if (here && here.updated > incoming.updated) {
          kept += 1;
          continue;
        }
        next[key] = incoming;
        changed += 1;
      }
      const portfolio = { schema: data.schema, version: data.lessonVersion, lesson: id, saved: now(), entries: next };
      merged.push([lesson.storageKey, JSON.stringify(portfolio)]);
    }
    for (const [key, value] of merged) {
      if (!write(key, value)) return refuse("could not be saved in this browser");
    }
    render();
    say(
      `Imported ${plural(changed, "entry", "entries")} into ${plural(merged.length, "lesson", "lessons")} from ${file.name}` +
        (kept ? `; kept ${plural(kept, "newer entry", "newer entries")} from this browser` : "") +
        (checked.unknown.length ? `; skipped ${checked.unknown.map(shorten).join(", ")}, not lessons of this site` : "") +
        ".",
      "ok",
    );
  }

  const input = $("#learning-import");
  input.addEventListener("change", async () => {
    const file = input.files && input.files[0];
    if (file) await importFile(file);
    input.value = "";
  });

  /* A phase project's self-assessment: {ticked: [item index, ...]} under the project's key. */
  function showProjects() {
    for (const box of document.querySelectorAll("input[data-project]")) {
      let ticked = [];
      try {
        const parsed = JSON.parse(read(box.dataset.project) || "{}");
        if (Array.isArray(parsed.ticked)) ticked = parsed.ticked;
      } catch (error) {
        // an unreadable entry shows as nothing ticked; the next tick replaces it
      }
      box.checked = ticked.includes(Number(box.dataset.item));
    }
  }

  for (const box of document.querySelectorAll("input[data-project]")) {
    box.addEventListener("change", () => {
      const boxes = document.querySelectorAll(`input[data-project="${box.dataset.project}"]`);
      const ticked = [...boxes].filter((b) => b.checked).map((b) => Number(b.dataset.item));
      write(box.dataset.project, JSON.stringify({ ticked, saved: now() }));
    });
  }

  window.addEventListener("storage", () => {
    render();
    showProjects();
  });
  render();
  showProjects();
})();
