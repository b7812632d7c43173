// lessonkit's block kinds for mystmd (Jupyter Book 2): lesson.md built as a page of a book.
//
// Each lessonkit block is a MyST directive; this plugin says how a reader sees it. Steps and
// experiments show their title and prompt (their code is the `{code-cell}` after them), tasks
// are exercises, scaffolds and figure code are code blocks, answers (a pause's, an
// experiment's expected result, a quiz's, the reasoning) are collapsed, consecutive set-up
// blocks are one set of tabs and the illustration is a row of cards. What only the toolkit
// reads (`{grading}`, `{attempt}`, `{numbers}`, `{evidence}`) is never shown. `{solution}`,
// `{hint}` and `{math}` are MyST's own directives (collapsed with `:class: dropdown`).
//
// The directives and each one's options must match lessonkit's ROLES
// (src/lessonkit/lesson/blocks.py), less MyST's own directives (`{solution}`, `{hint}`,
// `{math}`), whose options a plugin cannot extend; tests/integration/test_myst_tools.py
// checks that they do.

import { readFileSync } from 'node:fs';

import { load as loadYaml } from 'js-yaml';

const text = (value) => ({ type: 'text', value: String(value) });
const paragraph = (...children) => ({ type: 'paragraph', children });
const strong = (value) => ({ type: 'strong', children: [text(value)] });
const code = (value, lang = 'python') => ({ type: 'code', lang, value: value ?? '' });
const dropdown = (title, children) => ({
  type: 'details',
  children: [{ type: 'summary', children: [text(title)] }, ...children],
});
const list = (items, ordered = false) => ({
  type: 'list',
  ordered,
  children: items.map((item) => ({ type: 'listItem', children: [paragraph(...item)] })),
});

// An option that takes several values: a YAML list, or one `:key: value` line (the older
// syntax repeated the line; MyST keeps the first).
function many(data, key) {
  const option = (data.node.children ?? []).find((c) => c.type === 'mystOption' && c.name === key);
  if (!option || option.value === undefined || option.value === true) return [];
  return (Array.isArray(option.value) ? option.value : [option.value]).map(String);
}

function one(data, key) {
  const value = data.options?.[key];
  return value === undefined ? '' : String(value);
}

// Inline Markdown of an option or argument (backticks, emphasis), parsed by MyST.
function inline(ctx, value) {
  const parsed = ctx.parseMyst(value).children ?? [];
  return parsed.length === 1 && parsed[0].type === 'paragraph' ? parsed[0].children : [text(value)];
}

const common = { label: { type: String }, class: { type: String } };
const many_ = { type: 'list' }; // read with many(): a list is not a String to MyST's checks

const hidden = (name, doc, options = {}) => ({
  name,
  doc,
  arg: { type: String },
  options: { ...common, ...options },
  body: { type: String },
  run: () => [],
});

const directives = [
  {
    name: 'setup',
    doc: 'A set-up command; consecutive ones form one set of tabs.',
    arg: { type: String, required: true },
    options: { ...common, shell: { type: String } },
    body: { type: String },
    run(data) {
      const shell = one(data, 'shell') === 'powershell' ? 'powershell' : 'bash';
      const item = { type: 'tabItem', title: data.arg, children: [code(data.body, shell)] };
      return [{ type: 'tabSet', lessonkitSetup: true, children: [item] }];
    },
  },
  {
    name: 'check',
    doc: 'What a set-up or run should print.',
    options: { ...common, expected: { type: String } },
    run: (data, vfile, ctx) => [paragraph(strong('You should see: '), ...inline(ctx, one(data, 'expected')))],
  },
  {
    name: 'illustration',
    doc: 'A row of boxes: title | formula | caption.',
    arg: { type: String, required: true },
    options: { ...common, box: many_ },
    body: { type: 'myst' },
    run(data, vfile, ctx) {
      const cards = many(data, 'box').map((box) => {
        const [title, formula, caption] = box.split(' | ');
        return {
          type: 'card',
          children: [
            { type: 'cardTitle', children: [text(title)] },
            paragraph({ type: 'inlineCode', value: formula ?? '' }),
            paragraph(...inline(ctx, caption ?? '')),
          ],
        };
      });
      const grid = { type: 'grid', columns: [1, 1, cards.length, cards.length], children: cards };
      return [paragraph(strong(data.arg)), grid, ...(data.body ?? [])];
    },
  },
  {
    name: 'pause',
    doc: 'A stop-and-think question; its answer collapsed.',
    arg: { type: String, required: true },
    options: common,
    body: { type: 'myst' },
    run: (data, vfile, ctx) => [
      paragraph(strong('Pause: '), ...inline(ctx, data.arg)),
      dropdown('Answer', data.body ?? []),
    ],
  },
  {
    name: 'diagram',
    doc: 'A tree drawing.',
    options: { ...common, tree: { type: String } },
    body: { type: String },
    run: (data) => [code(data.body, 'text')],
  },
  hidden('numbers', 'The numbers the prose states, with the code that computes them.', {
    sections: many_,
    not_results: many_,
  }),
  {
    name: 'step',
    doc: 'One block of the worked example; its code is the {code-cell} after it.',
    arg: { type: String, required: true },
    options: { ...common, intro: { type: String }, summary: { type: String }, uses: many_ },
    body: { type: String },
    run(data, vfile, ctx) {
      const uses = many(data, 'uses').map((use) => {
        const [signature, meaning] = use.split(' | ');
        return [{ type: 'inlineCode', value: signature }, text(`: ${meaning ?? ''}`)];
      });
      return [
        paragraph(strong(data.arg)),
        paragraph(...inline(ctx, one(data, 'intro'))),
        ...(uses.length ? [list(uses)] : []),
        ...(data.body?.trim() ? [code(data.body)] : []),
        paragraph(...inline(ctx, one(data, 'summary'))),
      ];
    },
  },
  {
    name: 'run',
    doc: 'How to run the example.',
    arg: { type: String, required: true },
    options: { ...common, expected: { type: String }, about: { type: String } },
    run: (data, vfile, ctx) => [
      paragraph(...inline(ctx, one(data, 'about'))),
      code(data.arg, 'bash'),
      paragraph(strong('You should see: '), ...inline(ctx, one(data, 'expected'))),
    ],
  },
  {
    name: 'figure-data',
    doc: "The code that computes the lesson's figure data.",
    arg: { type: String, required: true },
    options: {
      ...common,
      prompt: { type: String },
      alt: { type: String },
      notebook_note: { type: String },
    },
    body: { type: String },
    run: (data, vfile, ctx) => [
      paragraph(strong(data.arg)),
      paragraph(...inline(ctx, one(data, 'prompt'))),
      dropdown('The data behind the figure', [code(data.body)]),
    ],
  },
  {
    name: 'plot',
    doc: 'How the figure is drawn.',
    options: common,
    body: { type: String },
    run: (data) => [dropdown('How the figure is drawn', [code(data.body)])],
  },
  {
    name: 'experiment',
    doc: 'A prediction, then code to run (the {code-cell} after it); the answer collapsed.',
    arg: { type: String, required: true },
    options: {
      ...common,
      prompt: { type: String },
      expected: { type: String },
      optional: { type: String },
      output: many_,
    },
    body: { type: String },
    run(data, vfile, ctx) {
      const title = one(data, 'optional') === 'yes' ? `${data.arg} (going further)` : data.arg;
      return [
        paragraph(strong(title)),
        paragraph(strong('Predict: '), ...inline(ctx, one(data, 'prompt'))),
        ...(data.body?.trim() ? [code(data.body)] : []),
        dropdown('What happens', [paragraph(...inline(ctx, one(data, 'expected')))]),
      ];
    },
  },
  {
    name: 'quiz',
    doc: 'A checkpoint question; the answer collapsed.',
    arg: { type: String },
    options: common,
    body: { type: String },
    run(data, vfile, ctx) {
      const quiz = loadYaml(data.body ?? '') ?? {};
      const options = (quiz.options ?? []).map((option) => inline(ctx, String(option)));
      const answer = options[quiz.answer] ?? [];
      return [
        paragraph(strong('Check your understanding: '), ...inline(ctx, String(quiz.question ?? ''))),
        list(options, true),
        dropdown('Answer', [paragraph(...answer), paragraph(...inline(ctx, String(quiz.explanation ?? '')))]),
      ];
    },
  },
  hidden('grading', 'How lessonkit check grades the tasks.'),
  hidden('attempt', 'An attempt lessonkit verify grades, with the verdict it must get.', {
    task: { type: String },
    expect: { type: String },
    message: { type: String },
    why: { type: String },
    instead: { type: String },
  }),
  hidden('evidence', 'The items of the evidence template and report.'),
  {
    name: 'task',
    doc: 'An exercise; its {scaffold}, {solution} and {hint} follow it.',
    arg: { type: String, required: true },
    options: {
      ...common,
      kind: { type: String },
      where: { type: String },
      title: { type: String },
      plan: many_,
      uses: many_,
    },
    body: { type: 'myst' },
    run(data, vfile, ctx) {
      const plan = many(data, 'plan').map((step) => inline(ctx, step));
      const children = [
        ...(data.options?.title ? [{ type: 'admonitionTitle', children: inline(ctx, data.options.title) }] : []),
        ...(data.body ?? []),
        ...(plan.length ? [list(plan, true)] : []),
        paragraph(...inline(ctx, one(data, 'where'))),
      ];
      const id = data.arg.trim().toLowerCase();
      return [{ type: 'exercise', label: data.arg.trim(), identifier: id, enumerated: true, children }];
    },
  },
  {
    name: 'scaffold',
    doc: 'The code the learner starts from.',
    arg: { type: String },
    options: common,
    body: { type: String },
    run: (data) => [code(data.body)],
  },
  {
    name: 'reasoning',
    doc: 'Why the solution works; collapsed.',
    arg: { type: String },
    options: common,
    body: { type: 'myst' },
    run: (data) => [dropdown('Why it works', data.body ?? [])],
  },
];

// Consecutive set-up blocks become one set of tabs, as on lessonkit's own page.
const setupTabs = {
  name: 'lessonkit-setup-tabs',
  stage: 'document',
  plugin: () => (tree) => {
    const walk = (node) => {
      if (!node.children) return;
      const merged = [];
      for (const child of node.children) {
        const last = merged[merged.length - 1];
        if (child.lessonkitSetup && last?.lessonkitSetup) {
          last.children.push(...child.children);
        } else {
          merged.push(child);
        }
      }
      node.children = merged;
      merged.forEach(walk);
    };
    walk(tree);
    const clean = (node) => {
      delete node.lessonkitSetup;
      (node.children ?? []).forEach(clean);
    };
    clean(tree);
  },
};

// A lesson's section ids (`(idea)=`) are its own: every lesson has an `idea`, a `setup`, a
// `step-1`. A book holds them all, and MyST's identifiers are the book's, so each lesson's
// targets, and the references to them, take the lesson id in front (`state-02-idea`); a task's
// exercise is `state-02-task-ID`, apart from a section of the same id, and its solution's
// "Solution to" refers to it.
function lessonId(vfile) {
  try {
    return /^id:\s*(\S+)\s*$/m.exec(readFileSync(vfile.path, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

const scopeIdentifiers = {
  name: 'lessonkit-scope-identifiers',
  stage: 'document',
  plugin: () => (tree, vfile) => {
    const id = vfile?.path && lessonId(vfile);
    if (!id) return;
    const targets = new Map();
    const tasks = new Map();
    const references = [];
    const rename = (node, identifier) => {
      node.identifier = identifier;
      node.label = identifier;
    };
    const walk = (node, inSolution) => {
      if (node.type === 'exercise' && node.identifier) {
        tasks.set(node.identifier, `${id}-task-${node.identifier}`);
        rename(node, tasks.get(node.identifier));
      } else if (node.type === 'crossReference' || (node.type === 'link' && node.url?.startsWith('#'))) {
        references.push([node, inSolution]);
      } else if (node.identifier && !node.implicit) {
        targets.set(node.identifier, `${id}-${node.identifier}`);
        rename(node, targets.get(node.identifier));
      }
      (node.children ?? []).forEach((child) => walk(child, inSolution || node.type === 'solution'));
    };
    walk(tree, false);
    for (const [node, inSolution] of references) {
      const names = inSolution ? tasks : targets;
      if (node.type === 'link') {
        const scoped = names.get(node.url.slice(1));
        if (scoped) node.url = `#${scoped}`;
      } else if (names.has(node.identifier)) {
        rename(node, names.get(node.identifier));
      }
    }
  },
};

const plugin = {
  name: 'lessonkit',
  directives,
  transforms: [setupTabs, scopeIdentifiers],
};

export default plugin;
