/* lessonkit lesson page: stages, shell tabs, copy buttons, the quiz and the browser-saved
   portfolio. No network: everything the script needs is embedded in the page as JSON.
   Learner text only ever goes into .value or .textContent, never into HTML. */
(() => {
  "use strict";

  const dataNode = document.getElementById("lesson-data");
  if (!dataNode) return;
  const data = JSON.parse(dataNode.textContent);
  document.documentElement.classList.add("js");

  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));
  const now = () => new Date().toISOString();
  const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  function element(tag, text) {
    const node = document.createElement(tag);
    node.textContent = text;
    return node;
  }

  /* Storage: every access is guarded, and a failure is shown, never swallowed. ------------- */

  const warning = $("#storage-warning");
  const saveState = $("#save-state");
  let writeFailed = false;

  function showWarning(text) {
    if (!warning) return;
    warning.textContent = text;
    warning.hidden = false;
  }

  function storageFailure(error) {
    writeFailed = true;
    const reason = error && error.name ? error.name : "storage unavailable";
    const text =
      `Your work is NOT being saved in this browser (${reason}): storage is disabled or full. ` +
      "Keep this tab open and use \u201cExport my learning\u201d to keep a copy.";
    showWarning(text);
    if (saveState) {
      saveState.textContent = text;
      saveState.classList.add("error");
    }
  }

  const storage = {
    read(key) {
      try {
        return window.localStorage.getItem(key);
      } catch (error) {
        storageFailure(error);
        return null;
      }
    },
    write(key, value) {
      try {
        window.localStorage.setItem(key, value);
        return true;
      } catch (error) {
        storageFailure(error);
        return false;
      }
    },
    remove(key) {
      try {
        window.localStorage.removeItem(key);
      } catch (error) {
        storageFailure(error);
      }
    },
  };

  /* The portfolio: {schema, version, lesson, saved, entries: {key: {value, updated}}}. ------ */

  const { parse, checkEntries, shorten } = window.lessonkitPortfolio;
  const MAX_FILE = 5000000;
  const undoKey = `${data.storageKey}:before-import`;

  function emptyPortfolio() {
    return { schema: data.schema, version: data.version, lesson: data.lesson, saved: now(), entries: {} };
  }

  /* Check a portfolio file; returns {portfolio} or {error}, a reason a person can act on. */
  function parsePortfolio(text) {
    const opened = parse(text, data.schema);
    if (opened.error) return opened;
    let parsed = opened.parsed;
    if (parsed.version === data.courseVersion) {
      // A file of every lesson, exported from "My learning": take this lesson's part.
      const lessons = parsed.lessons;
      const part = lessons && typeof lessons === "object" && own(lessons, data.lesson) ? lessons[data.lesson] : null;
      if (!part || typeof part !== "object") return { error: `holds no work for lesson ${data.lesson}` };
      parsed = { ...parsed, version: data.version, lesson: data.lesson, saved: part.saved ?? parsed.saved, entries: part.entries };
    }
    if (parsed.version !== data.version) {
      return { error: `has portfolio version ${shorten(JSON.stringify(parsed.version) ?? "missing")}; this page reads version ${data.version}` };
    }
    if (parsed.lesson !== data.lesson) {
      return { error: `belongs to lesson ${shorten(JSON.stringify(parsed.lesson) ?? "missing")}, not ${data.lesson}` };
    }
    const checked = checkEntries(parsed.entries, parsed.saved);
    if (checked.error) return checked;
    return { portfolio: { ...emptyPortfolio(), saved: checked.saved, entries: checked.entries } };
  }

  function loadPortfolio() {
    const raw = storage.read(data.storageKey);
    if (raw === null) return emptyPortfolio();
    const checked = parsePortfolio(raw);
    if (checked.error) {
      // Keep the unreadable copy under its own key so that nothing is lost, then start afresh.
      storage.write(`${data.storageKey}:unreadable:${Date.now()}`, raw);
      showWarning(
        `The work saved for this lesson could not be read (it ${checked.error}). ` +
          "A copy was kept in this browser's storage; new work is saved from now on.",
      );
      return emptyPortfolio();
    }
    return checked.portfolio;
  }

  let portfolio = loadPortfolio();
  let saveTimer = null;

  const value = (key) => (own(portfolio.entries, key) ? portfolio.entries[key].value : undefined);

  function saveNow() {
    clearTimeout(saveTimer);
    saveTimer = null;
    portfolio.saved = now();
    const saved = storage.write(data.storageKey, JSON.stringify(portfolio));
    if (saved) {
      if (writeFailed && warning) warning.hidden = true;
      writeFailed = false;
      if (saveState) {
        saveState.classList.remove("error");
        saveState.textContent =
          `Saved in this browser at ${new Date().toLocaleTimeString()}. ` +
          "Export or back up your portfolio at any time.";
      }
    }
    renderSummary();
    return saved;
  }

  function setValue(key, entryValue, { now: immediately = false } = {}) {
    portfolio.entries[key] = { value: entryValue, updated: now() };
    if (immediately) {
      saveNow();
    } else {
      clearTimeout(saveTimer);
      saveTimer = setTimeout(saveNow, 300);
    }
  }

  function flush() {
    if (saveTimer !== null) saveNow();
  }
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") flush();
  });

  /* Saved fields: predictions, answers, notes and "exercise complete". --------------------- */

  const fields = $$("[data-save]");
  for (const field of fields) {
    const key = field.dataset.save;
    if (field.type === "checkbox") {
      field.addEventListener("change", () => setValue(key, field.checked, { now: true }));
    } else {
      field.addEventListener("input", () => setValue(key, field.value));
      field.addEventListener("change", flush);
    }
  }

  function fillFields() {
    for (const field of fields) {
      const saved = value(field.dataset.save);
      if (field.type === "checkbox") field.checked = saved === true;
      else field.value = typeof saved === "string" ? saved : "";
    }
    for (const quiz of quizzes) quiz.restore();
    restoreProgress();
    renderSummary();
  }

  /* Tabs: the stage bar and the shell choice share one keyboard behaviour. ----------------- */

  function markSelected(tabs, chosen) {
    for (const tab of tabs) {
      const selected = tab === chosen;
      if (tab.getAttribute("aria-selected") === String(selected)) continue; // as the page has it
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      const panel = document.getElementById(tab.getAttribute("aria-controls"));
      if (panel) panel.hidden = !selected;
    }
  }

  function tablist(list, select) {
    const tabs = $$('[role="tab"]', list);
    list.addEventListener("click", (event) => {
      const tab = event.target.closest('[role="tab"]');
      if (tab && list.contains(tab)) select(tab);
    });
    list.addEventListener("keydown", (event) => {
      const index = tabs.indexOf(document.activeElement);
      const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
      if (index < 0 || !own(moves, event.key)) return;
      event.preventDefault();
      const next = tabs[(moves[event.key] + tabs.length) % tabs.length];
      next.focus();
      select(next);
    });
    return tabs;
  }

  /* Stages ----------------------------------------------------------------------------------- */

  const stageBar = $(".stage-tabs");
  const stageTabs = stageBar ? $$('[role="tab"]', stageBar) : [];
  const stageNumber = $("[data-stage-number]");
  const stageName = $("[data-stage-name]");

  /* On a wide screen the outline stays beside the page as it scrolls, but only while all of
     it fits in the window: a taller one would be cut off at the window's edge, or hide its
     last entries in a box of their own, so it stays at the top of the page, whole. */
  function fitOutline() {
    const outline = $(".outline");
    if (!outline) return;
    outline.classList.remove("fits");
    outline.classList.toggle("fits", outline.offsetHeight <= window.innerHeight);
  }
  fitOutline();
  window.addEventListener("resize", fitOutline);

  function showStage(number, { save = true } = {}) {
    const tab = stageTabs.find((candidate) => Number(candidate.dataset.stage) === number);
    if (!tab) return false;
    markSelected(stageTabs, tab);
    if (stageNumber) stageNumber.textContent = String(number);
    if (stageName) stageName.textContent = data.stages[number - 1] || "";
    for (const link of $$(".outline-stage")) {
      if (link.getAttribute("href") === `#stage-${number}`) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
    if (!save) return true; // opening the page: its address is left as it was loaded
    if (value("progress:stage") !== number) setValue("progress:stage", number);
    showInAddress(number);
    return true;
  }

  /* The address names the open stage (#stage-3), so it can be linked and a reload opens it
     again; a link to a section of that stage is left as it is. No history entry per click. */
  function showInAddress(number) {
    const linked = location.hash ? document.getElementById(hashId()) : null;
    if (linked && linked.closest(".stage")?.dataset.stage === String(number)) return;
    try {
      history.replaceState(history.state, "", `#stage-${number}`);
    } catch (error) {
      // A browser that refuses to change this address still shows the stage.
    }
  }

  if (stageBar) {
    tablist(stageBar, (tab) => {
      const number = Number(tab.dataset.stage);
      showStage(number);
      // Chosen from further down the page (the bar is sticky): bring the stage's start into view.
      const panel = document.getElementById(`stage-${number}`);
      if (panel && panel.getBoundingClientRect().top < 0) panel.scrollIntoView({ block: "start" });
    });
  }

  function doneStages() {
    const done = value("progress:done");
    return Array.isArray(done) ? done : [];
  }

  function restoreProgress() {
    const done = doneStages();
    for (const tab of stageTabs) {
      const finished = done.includes(Number(tab.dataset.stage));
      tab.classList.toggle("is-done", finished);
      const note = $(".stage-done", tab);
      if (note) note.hidden = !finished;
    }
  }

  for (const button of $$("[data-stage-next]")) {
    button.addEventListener("click", () => {
      const current = Number(button.closest(".stage").dataset.stage);
      const done = doneStages().filter((n) => n !== current).concat([current]).sort((a, b) => a - b);
      setValue("progress:done", done, { now: true });
      restoreProgress();
      const next = Number(button.dataset.stageNext);
      const panel = document.getElementById(`stage-${next}`);
      if (next && panel) {
        showStage(next);
        panel.scrollIntoView({ block: "start" });
        $(".stage-title", panel)?.focus({ preventScroll: true });
      }
    });
  }

  /* In-page links open the stage and the reveals that hold their target. ------------------- */

  function reveal(id) {
    const target = id ? document.getElementById(id) : null;
    if (!target) return null;
    const panel = target.closest(".stage");
    if (panel) showStage(Number(panel.dataset.stage));
    for (let node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    return target;
  }

  const hashId = () => decodeURIComponent(location.hash.slice(1));

  document.addEventListener("click", (event) => {
    const link = event.target.closest('a[href^="#"]');
    if (link) reveal(decodeURIComponent(link.getAttribute("href").slice(1)));
  });
  window.addEventListener("hashchange", () => reveal(hashId())?.scrollIntoView({ block: "start" }));

  /* Shell tabs in the setup help: one choice for every command group. ----------------------- */

  const shellKey = "lessonkit:shell";
  const shellGroups = $$(".shell-group")
    .map((group) => ({ list: $(".shell-tabs", group) }))
    .filter((group) => group.list);

  function chooseShell(shell, remember) {
    for (const group of shellGroups) {
      const chosen = group.tabs.find((tab) => tab.dataset.shell === shell) || group.tabs[0];
      markSelected(group.tabs, chosen);
    }
    if (remember) storage.write(shellKey, shell);
  }

  for (const group of shellGroups) {
    group.tabs = tablist(group.list, (tab) => chooseShell(tab.dataset.shell, true));
  }
  if (shellGroups.length) {
    const windows = /Windows/i.test(navigator.userAgent);
    chooseShell(storage.read(shellKey) || (windows ? "powershell" : "bash"), false);
  }

  /* Copy buttons --------------------------------------------------------------------------- */

  function copyBySelection(text) {
    const buffer = document.createElement("textarea");
    buffer.value = text;
    buffer.setAttribute("readonly", "");
    buffer.className = "visually-hidden";
    document.body.append(buffer);
    buffer.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    buffer.remove();
    return copied;
  }

  for (const button of $$("button.copy")) {
    button.addEventListener("click", async () => {
      const text = $("pre", button.closest(".codeblock")).textContent;
      let copied = false;
      try {
        await navigator.clipboard.writeText(text);
        copied = true;
      } catch (error) {
        copied = copyBySelection(text);
      }
      button.textContent = copied ? "Copied" : "Copy failed: select the text";
      setTimeout(() => {
        button.textContent = "Copy";
      }, 2000);
    });
  }

  /* Quiz: a wrong choice says so and lets the learner try again; the answer and the
     explanation come with a right choice, or when the learner asks to see them. The chosen
     answer is kept. */

  const quizzes = $$("form.quiz").map((form) => {
    const key = form.dataset.quiz;
    const answer = Number(form.dataset.answer);
    const verdict = $(".verdict", form);
    const explanation = $(".explanation", form);
    const revealButton = $(".reveal-answer", form);
    const options = $$('input[type="radio"]', form);
    const optionText = (index) => {
      const input = options[index];
      const label = input ? $(`label[for="${input.id}"]`, form) : null;
      return label ? label.textContent.trim() : "";
    };

    function tell(kind, text, { explain = false, offerAnswer = false } = {}) {
      verdict.className = kind ? `verdict ${kind}` : "verdict";
      verdict.textContent = text;
      explanation.hidden = !explain;
      if (revealButton) revealButton.hidden = !offerAnswer;
    }

    function show(choice) {
      if (choice === answer) tell("right", "Right.", { explain: true });
      else tell("wrong", "Not quite. Try another answer, or show the answer.", { offerAnswer: true });
    }

    revealButton?.addEventListener("click", () => {
      tell("revealed", `The answer is: ${optionText(answer)}`, { explain: true });
    });

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = options.find((input) => input.checked);
      if (!chosen) {
        tell("wrong", "Choose an answer first.");
        return;
      }
      setValue(key, Number(chosen.value), { now: true });
      show(Number(chosen.value));
    });

    return {
      key,
      optionText,
      answer,
      restore() {
        const saved = value(key);
        for (const input of options) input.checked = Number(input.value) === saved;
        if (Number.isInteger(saved) && options[saved]) show(saved);
        else tell("", "");
      },
    };
  });

  /* My learning: what is saved, export, import with undo. ---------------------------------- */

  const summary = $("#portfolio-summary");
  const count = $("#portfolio-count");
  const message = $("#portfolio-message");

  function say(text, kind) {
    if (!message) return;
    message.textContent = text;
    message.className = `portfolio-message ${kind}`;
    message.setAttribute("role", kind === "error" ? "alert" : "status");
  }

  function describe(key, saved) {
    const quiz = quizzes.find((candidate) => candidate.key === key);
    if (quiz && Number.isInteger(saved)) {
      return `${quiz.optionText(saved)} (${saved === quiz.answer ? "right" : "not right"})`;
    }
    if (key === "progress:stage") return `${saved} · ${data.stages[saved - 1] || ""}`;
    if (key === "progress:done") return saved.map((n) => `${n} · ${data.stages[n - 1] || ""}`).join(", ");
    if (saved === true) return "yes";
    const text = String(saved);
    return text.length > 400 ? `${text.slice(0, 400)}\u2026` : text;
  }

  function renderSummary() {
    if (!summary) return;
    const keys = Object.keys(portfolio.entries).filter((key) => {
      const saved = value(key);
      return saved !== "" && saved !== false && !(Array.isArray(saved) && saved.length === 0);
    });
    if (count) count.textContent = plural(keys.length, "entry", "entries");
    const rows = [];
    for (const key of keys) {
      rows.push(element("dt", own(data.fields, key) ? data.fields[key] : key));
      rows.push(element("dd", describe(key, value(key))));
    }
    summary.replaceChildren(...rows);
  }

  $("#portfolio-export")?.addEventListener("click", () => {
    flush();
    const file = { ...emptyPortfolio(), entries: portfolio.entries };
    const blob = new Blob([`${JSON.stringify(file, null, 2)}\n`], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = `lessonkit-${data.lesson}-portfolio-${file.saved.slice(0, 10)}.json`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    say(`Exported ${plural(Object.keys(file.entries).length, "entry", "entries")} to ${link.download}.`, "ok");
  });

  /* An import remembers, per entry it changed, the value before and the value it brought.
     Undo puts back the value before, except where the learner has written since. */
  const undoButton = $("#portfolio-undo");
  let lastImport = readUndo();

  function readUndo() {
    const raw = storage.read(undoKey);
    if (raw === null) return null;
    try {
      const parsed = JSON.parse(raw);
      const changes = parsed && parsed.changes;
      if (changes && typeof changes === "object" && !Array.isArray(changes)) return parsed;
    } catch (error) {
      // An unreadable undo record only loses the undo, never the work itself.
    }
    return null;
  }

  function showUndo() {
    if (undoButton) undoButton.hidden = lastImport === null;
  }
  showUndo();

  /* Take each imported entry unless this browser holds a newer one of the same name. */
  function merge(entries) {
    const changes = {};
    let same = 0;
    let kept = 0;
    for (const [key, incoming] of Object.entries(entries)) {
      const current = own(portfolio.entries, key) ? portfolio.entries[key] : null;
      if (current && JSON.stringify(current.value) === JSON.stringify(incoming.value)) {
        same += 1;
      } else if (current && current.updated > incoming.updated) {
        kept += 1;
      } else {
        changes[key] = { before: current, imported: incoming.value };
        portfolio.entries[key] = incoming;
      }
    }
    return { changes, same, kept };
  }

  async function importFile(file) {
    const refuse = (reason) =>
      say(`Nothing was imported: ${file.name} ${reason}. Your saved work is unchanged.`, "error");
    if (file.size > MAX_FILE) {
      refuse("is larger than a portfolio can be");
      return;
    }
    let text;
    try {
      text = await file.text();
    } catch (error) {
      refuse("could not be read");
      return;
    }
    const checked = parsePortfolio(text);
    if (checked.error) {
      refuse(checked.error);
      return;
    }
    flush();
    const before = JSON.parse(JSON.stringify(portfolio));
    const { changes, same, kept } = merge(checked.portfolio.entries);
    if (!saveNow()) {
      portfolio = before;
      fillFields();
      refuse("could not be saved in this browser");
      return;
    }
    lastImport = { file: file.name, at: now(), changes };
    storage.write(undoKey, JSON.stringify(lastImport));
    showUndo();
    fillFields();
    say(
      `Imported ${plural(Object.keys(changes).length, "entry", "entries")} from ${file.name}` +
        (same ? `; ${same} already matched` : "") +
        (kept ? `; kept ${plural(kept, "newer entry", "newer entries")} from this browser` : "") +
        ". \u201cUndo the last import\u201d puts back what was here before.",
      "ok",
    );
  }

  const importInput = $("#portfolio-import");
  importInput?.addEventListener("change", async () => {
    const file = importInput.files && importInput.files[0];
    if (file) await importFile(file);
    importInput.value = "";
  });

  undoButton?.addEventListener("click", () => {
    if (!lastImport) return;
    flush();
    let restored = 0;
    let kept = 0;
    for (const [key, change] of Object.entries(lastImport.changes)) {
      const current = own(portfolio.entries, key) ? portfolio.entries[key].value : undefined;
      if (JSON.stringify(current) !== JSON.stringify(change.imported)) {
        kept += 1; // written since the import: the learner's newer words stay
        continue;
      }
      if (change.before && own(change.before, "value")) portfolio.entries[key] = change.before;
      else delete portfolio.entries[key];
      restored += 1;
    }
    lastImport = null;
    saveNow();
    storage.remove(undoKey);
    showUndo();
    fillFields();
    say(
      `Import undone: ${plural(restored, "entry is", "entries are")} back as before the import` +
        (kept ? `; kept ${plural(kept, "entry", "entries")} you changed since then` : "") +
        ".",
      "ok",
    );
  });

  /* Start: saved work into the fields, then the stage from the address or the portfolio. ---- */

  fillFields();
  const target = location.hash ? reveal(hashId()) : null;
  if (target) {
    target.scrollIntoView({ block: "start" });
  } else {
    const saved = value("progress:stage");
    if (!(Number.isInteger(saved) && showStage(saved, { save: false }))) showStage(1, { save: false });
  }
})();
