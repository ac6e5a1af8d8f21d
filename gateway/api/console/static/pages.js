// The console's pages. Each has build(section) (once) and load(section) (each visit).
// Every value from the API goes into the DOM as text (dom.js), never as markup.
import {api, ApiError, userPath} from "./api.js";
import {fill, fmtNum, fmtTime, h, pretty, table} from "./dom.js";
import {confirmButton, go, guarded, say, selection} from "./ui.js";

const TYPES = ["episodic", "semantic", "trait", "goal", "preference", "inference"];
const $ = (id) => document.getElementById(id);
const val = (id) => $(id).value.trim();

function options(values, blank) {
  return [blank !== undefined ? h("option", {value: ""}, blank) : null, ...values.map((v) => h("option", {value: v}, v))];
}

function userFields(prefix, withFriend = true) {
  return [
    h("label", {}, "User", h("input", {id: `${prefix}-user`, required: true, list: "known-users", value: selection.user})),
    withFriend ? h("label", {}, "Friend", h("input", {id: `${prefix}-friend`, list: "known-friends", value: selection.friend,
      placeholder: "(profile only)"})) : null,
  ];
}

function remember(prefix) {
  selection.user = val(`${prefix}-user`);
  if ($(`${prefix}-friend`)) selection.friend = val(`${prefix}-friend`);
}

function download(name, text) {
  const link = h("a", {href: URL.createObjectURL(new Blob([text], {type: "application/x-ndjson"})), download: name});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// -- users ----------------------------------------------------------------------------

const users = {
  build(section) {
    fill(section,
      h("h2", {}, "Users and their friends"),
      h("form", {id: "users-form", onsubmit: (e) => { e.preventDefault(); guarded(() => users.load()); }},
        h("label", {}, "Filter", h("input", {id: "users-q", placeholder: "part of a user id"})),
        h("button", {id: "users-refresh", type: "submit"}, "Refresh")),
      h("div", {id: "users-list"}),
      h("datalist", {id: "known-users"}), h("datalist", {id: "known-friends"}),
      h("h3", {}, "Import memories (JSONL, as exported)"),
      h("form", {id: "import-form", onsubmit: (e) => { e.preventDefault(); guarded(users.importFile); }},
        h("label", {}, "User", h("input", {id: "import-user", required: true})),
        h("label", {}, "File", h("input", {id: "import-file", type: "file", accept: ".jsonl,.ndjson,application/x-ndjson", required: true})),
        h("button", {type: "submit"}, "Import")));
  },
  async load() {
    const data = await api("GET", "/v1/admin/users", {params: {q: val("users-q"), limit: 500}});
    fill($("known-users"), data.data.map((u) => h("option", {value: u.user_id})));
    const friends = new Set(data.data.flatMap((u) => u.friends));
    fill($("known-friends"), [...friends].sort().map((f) => h("option", {value: f})));
    const rows = data.data.map((u) => h("tr", {class: "user-row", dataset: {user: u.user_id}},
      h("td", {class: "user-id"}, u.user_id),
      h("td", {}, u.friends.map((f) => h("span", {class: "chip"}, f))),
      h("td", {class: "num"}, u.memories),
      h("td", {class: "num"}, u.keys),
      h("td", {},
        h("button", {type: "button", class: "secondary", dataset: {action: "memories"},
          onclick: () => { selection.user = u.user_id; selection.friend = u.friends[0] || ""; go("memories"); }}, "Memories"),
        " ",
        h("button", {type: "button", class: "secondary", dataset: {action: "inspect"},
          onclick: () => { selection.user = u.user_id; selection.friend = u.friends[0] || ""; go("inspector"); }}, "Inspect recall"),
        " ",
        h("button", {type: "button", class: "secondary", dataset: {action: "export"},
          onclick: () => guarded(async () => {
            download(`${u.user_id}.jsonl`, await api("GET", userPath(u.user_id, "export"), {text: true}));
            say(`Exported ${u.user_id}.`);
          })}, "Export"),
        " ",
        confirmButton("Forget user", "Really forget all?", () => guarded(async () => {
          const done = await api("POST", userPath(u.user_id, "forget"));
          say(`Forgot ${done.user_id}: ${done.deleted} memories erased.`);
          await users.load();
        }), {name: "forget"}))));
    fill($("users-list"), rows.length ? table(
      [{title: "User"}, {title: "Friends"}, {title: "Memories", cls: "num"}, {title: "Keys", cls: "num"}, {title: ""}],
      rows, {id: "users-table"}) : h("p", {class: "muted"}, "No users."));
    if (data.next_cursor) $("users-list").append(h("p", {class: "muted"}, "More users: narrow the filter."));
  },
  async importFile() {
    const file = $("import-file").files[0];
    const result = await api("POST", userPath(val("import-user"), "import"), {raw: await file.text()});
    say(`Imported ${result.imported} memories for ${val("import-user")}.`);
    await users.load();
  },
};

// -- memories -------------------------------------------------------------------------

function whyCell(hit) {
  if (!hit) return h("td", {class: "why"}, "");
  const w = hit.why;
  return h("td", {class: "why mem-why"},
    h("div", {}, h("b", {class: "mem-score"}, `score ${fmtNum(hit.score)}`), ` (${w.ranking})`),
    h("div", {}, "semantic ", h("b", {}, fmtNum(w.semantic))),
    h("div", {}, "keyword ", h("b", {}, w.keyword_terms.length ? w.keyword_terms.join(", ") : "none"),
      ` (${Math.round(w.keyword_share * 100)}% of terms)`),
    h("div", {}, "recency ", h("b", {}, `${fmtNum(w.age_days, 1)} d old`)));
}

const memories = {
  lastHits: false,
  build(section) {
    const submit = (e) => { e.preventDefault(); guarded(() => (val("mem-query") ? memories.search() : memories.list())); };
    fill(section,
      h("h2", {}, "Memories"),
      h("form", {id: "mem-form", onsubmit: submit},
        ...userFields("mem"),
        h("label", {}, "Scope", h("select", {id: "mem-scope"}, options(["profile", "event"], "any"))),
        h("label", {}, "Type", h("select", {id: "mem-type"}, options(TYPES, "any"))),
        h("label", {}, "After", h("input", {id: "mem-after", type: "date"})),
        h("label", {}, "Before", h("input", {id: "mem-before", type: "date"})),
        h("label", {}, "Search", h("input", {id: "mem-query", placeholder: "empty: list newest first", size: 30})),
        h("label", {class: "inline"}, h("input", {id: "mem-retired", type: "checkbox"}), "retired too"),
        h("button", {id: "mem-go", type: "submit"}, "Show")),
      h("div", {id: "mem-results"}),
      h("div", {id: "mem-history"}));
  },
  async load() {
    $("mem-user").value = selection.user;
    $("mem-friend").value = selection.friend;
    if (selection.user) await memories.list();
  },
  filters() {
    const day = (id) => (val(id) ? new Date(val(id) + "T00:00:00Z").toISOString() : undefined);
    return {user_id: val("mem-user"), friend_id: val("mem-friend") || undefined, scope: val("mem-scope") || undefined,
      type: val("mem-type") || undefined, occurred_after: day("mem-after"), occurred_before: day("mem-before")};
  },
  async list() {
    remember("mem");
    const f = memories.filters();
    const page = await api("GET", "/v1/admin/memories", {params: {...f, limit: 200}});
    const items = page.data.filter((r) => $("mem-retired").checked || !r.retired);
    memories.render(items.map((record) => ({record})), false);
    say(`${items.length} memories of ${f.user_id}${f.friend_id ? " seen by " + f.friend_id : " (profile)"}.`);
  },
  async search() {
    remember("mem");
    const f = memories.filters();
    const body = {user_id: f.user_id, friend_id: f.friend_id || null, query: val("mem-query"), top_k: 20,
      include_retired: $("mem-retired").checked};
    if (f.scope) body.scopes = [f.scope];
    if (f.type) body.types = [f.type];
    if (f.occurred_after) body.occurred_after = f.occurred_after;
    if (f.occurred_before) body.occurred_before = f.occurred_before;
    const hits = await api("POST", "/v1/admin/memories/search", {body});
    memories.render(hits.data, true);
    say(`${hits.data.length} hits.`);
  },
  render(rows, scored) {
    const body = rows.map(({record, ...hit}) => memories.row(record, scored ? hit : null));
    fill($("mem-results"), body.length ? table(
      [{title: "Memory"}, {title: "Kind"}, {title: "Occurred"}, {title: scored ? "Score and why" : ""}, {title: ""}],
      body, {id: "mem-table"}) : h("p", {class: "muted", id: "mem-empty"}, "No memories."));
  },
  row(r, hit) {
    const text = h("td", {class: "mem-text"}, r.text);
    const tr = h("tr", {class: "memory", dataset: {id: r.id}},
      text,
      h("td", {}, h("span", {class: "chip"}, r.type), h("span", {class: "chip"}, r.scope),
        r.friend_id ? h("span", {class: "chip"}, r.friend_id) : null,
        r.retired ? h("span", {class: "chip retired"}, "retired") : null),
      h("td", {}, fmtTime(r.occurred_at)),
      whyCell(hit),
      h("td", {},
        h("button", {type: "button", class: "secondary mem-edit", onclick: () => memories.edit(tr, text, r)}, "Edit"), " ",
        h("button", {type: "button", class: "secondary mem-history", onclick: () => guarded(() => memories.history(r))}, "History"), " ",
        confirmButton("Delete", "Really delete?", () => guarded(async () => {
          await api("DELETE", `/v1/admin/memories/${r.id}`, {params: memories.owner(r)});
          tr.remove();
          say(`Deleted ${r.id}.`);
        }), {class: "danger mem-delete"})));
    return tr;
  },
  owner(r) {
    return {user_id: r.user_id, friend_id: r.friend_id || val("mem-friend") || undefined};
  },
  edit(tr, cell, r) {
    const area = h("textarea", {class: "mem-edit-text"});
    area.value = r.text;
    const type = h("select", {class: "mem-edit-type"}, options(TYPES));
    type.value = r.type;
    const save = h("button", {type: "button", class: "mem-save", onclick: () => guarded(async () => {
      const patch = {};
      if (area.value !== r.text) patch.text = area.value;
      if (type.value !== r.type) patch.type = type.value;
      const updated = await api("PATCH", `/v1/admin/memories/${r.id}`, {params: memories.owner(r), body: patch});
      tr.replaceWith(memories.row(updated, null));
      say(`Saved ${r.id}.`);
    })}, "Save");
    const cancel = h("button", {type: "button", class: "secondary", onclick: () => fill(cell, r.text)}, "Cancel");
    fill(cell, area, h("div", {}, type, " ", save, " ", cancel));
    area.focus();
  },
  async history(r) {
    const chain = await api("GET", `/v1/admin/memories/${r.id}/history`, {params: memories.owner(r)});
    fill($("mem-history"), h("div", {class: "card", id: "mem-history-panel"},
      h("h3", {}, "Supersede history (oldest first)"),
      table([{title: "Id"}, {title: "Text"}, {title: "Updated"}, {title: "State"}], chain.data.map((m) => h("tr", {},
        h("td", {}, m.id.slice(0, 12) + "…"), h("td", {}, m.text), h("td", {}, fmtTime(m.updated_at)),
        h("td", {}, m.retired ? `retired: ${m.retired_reason || ""}` : (m.id === r.id ? "this one" : "live")))))));
  },
};

// -- recall inspector -----------------------------------------------------------------

const inspector = {
  build(section) {
    fill(section,
      h("h2", {}, "Recall inspector"),
      h("p", {class: "muted"}, "Runs the request side of the plugin chain as the user talking to the friend, without sending the chat call upstream: what would be recalled, injected, where, and what it costs."),
      h("form", {id: "insp-form", onsubmit: (e) => { e.preventDefault(); guarded(inspector.run); }},
        ...userFields("insp"),
        h("label", {}, "Model", h("input", {id: "insp-model", value: "gpt-4o-mini"})),
        h("label", {}, "Message (or a JSON array of messages)", h("textarea", {id: "insp-message", required: true})),
        h("button", {id: "insp-run", type: "submit"}, "Inspect")),
      h("div", {id: "insp-out"}));
  },
  async load() {
    $("insp-user").value = selection.user;
    $("insp-friend").value = selection.friend;
  },
  async run() {
    remember("insp");
    const text = val("insp-message");
    let messages = [{role: "user", content: text}];
    if (text.startsWith("[")) {
      try { messages = JSON.parse(text); } catch (_) { /* a plain message that starts with [ */ }
    }
    const out = await api("POST", "/v1/admin/recall/inspect", {body: {
      user_id: val("insp-user"), friend_id: val("insp-friend") || "default", model: val("insp-model") || "gpt-4o-mini", messages}});
    const t = out.tokens;
    fill($("insp-out"),
      h("div", {class: "figures"},
        figure("prompt tokens before", t.before), figure("after", t.after),
        figure("memory cost (tokens)", t.injected, "insp-cost"), figure("request phase (ms)", out.elapsed_ms)),
      h("p", {class: "muted"}, `Chain: ${out.plugins.join(" → ") || "(no plugins)"}; tokens by ${t.encoding}.`),
      out.degraded.length ? h("p", {class: "error", id: "insp-degraded"}, "Degraded: " + out.degraded.join(", ")) : null,
      h("h3", {}, "Recalled memories"),
      out.recalled.length ? h("p", {class: "muted", id: "insp-rule"}, highRule(out)) : null,
      out.recalled.length ? table([{title: "Memory"}, {title: "Relevance (decides the set)", cls: "num"}, {title: "Set"},
        {title: "Ranking score", cls: "num"}, {title: "Cosine", cls: "num"}, {title: "By"}],
        out.recalled.map((m) => h("tr", {class: "recalled", dataset: {id: m.id}},
          h("td", {}, m.text === null ? `(${m.id}: gone)` : m.text),
          h("td", {class: "num insp-relevance"}, h("b", {}, fmtNum(m.calibrated ?? m.score))),
          h("td", {class: "insp-set"}, [m.relevance, m.scope, m.added].filter(Boolean).join(" · ")),
          h("td", {class: "num"}, fmtNum(m.score)), h("td", {class: "num"}, fmtNum(m.cosine)), h("td", {}, m.reported_by))),
        {id: "insp-recalled"}) : h("p", {class: "muted", id: "insp-recalled-none"}, "Nothing recalled."),
      h("h3", {}, "Injected items"),
      out.injected.length ? table([{title: "Where"}, {title: "Text"}, {title: "Score", cls: "num"}],
        out.injected.map((i) => h("tr", {}, h("td", {}, i.owner + (i.group ? ` (${i.group})` : "")), h("td", {}, i.text),
          h("td", {class: "num"}, fmtNum(i.score)))), {id: "insp-injected"}) : h("p", {class: "muted"}, "No items injected."),
      out.tools_added.length ? h("p", {}, "Tools added: ", out.tools_added.map((n) => h("span", {class: "chip"}, n))) : null,
      h("h3", {}, "What memorization would form from the last message"),
      memorizationPreview(out.memorization),
      h("h3", {}, "Messages that would go upstream"),
      h("div", {id: "insp-messages"}, out.messages.map((m) => h("div", {class: `card msg origin-${m.origin}`, dataset: {origin: m.origin}},
        h("span", {class: "badge"}, m.origin), " ", h("b", {}, m.message.role),
        h("pre", {}, typeof m.message.content === "string" ? m.message.content : pretty(m.message.content ?? m.message))))),
      h("details", {}, h("summary", {}, "Plugin annotations"), h("pre", {}, pretty(out.annotations))));
  },
};

// Verbatim memorization's disclosure formation on the last user message: the memories it
// forms (scope, slot; a memory of several statements lists them, each retired on its own by a
// later change) or why it forms none ("formed nothing: a request").
function memorizationPreview(m) {
  if (!m) return h("p", {class: "muted"}, "No preview.");
  if (!m.formed.length) {
    const why = {request: "a request", question: "a question", small_talk: "small talk", meta: "talk about the conversation",
      other: "nothing about the user"}[m.dropped] || m.dropped;
    return h("p", {class: "muted", id: "insp-formed-none"}, `Formed nothing: ${why}.`);
  }
  return table([{title: "Memory"}, {title: "Scope"}, {title: "Type"}, {title: "Supersedes the same"}],
    m.formed.map((f) => h("tr", {}, h("td", {}, f.text, (f.statements || []).length > 1
      ? h("ol", {class: "insp-statements"}, ...f.statements.map((s) => h("li", {}, s))) : null),
    h("td", {}, f.scope), h("td", {}, f.type), h("td", {}, f.slot || "–"))),
    {id: "insp-formed"});
}

// What splits recalled memories into high (prompt) and low (memory_search tool): the
// calibrated relevance against the high_threshold a recall plugin reports in its
// annotation (the SDK's RecallAnnotation; the first plugin that reports one).
function highRule(out) {
  const note = Object.values(out.annotations || {}).find(
    (n) => n && typeof n === "object" && n.high_threshold !== undefined) || {};
  const cut = note.high_threshold;
  // a plugin may add memories to high whatever their relevance (RecalledMemory.added: why, shown in Set)
  const added = (out.recalled || []).some((m) => m.added) ? ", or when Set says why it was added" : "";
  return cut === undefined ? `High or low: by the calibrated relevance (the ranking score where a store has no calibration)${added}.`
    : `High (into the prompt) when the calibrated relevance is at least ${cut}${added}; the rest is low (left to the memory_search tool).`;
}

function figure(label, value, id) {
  return h("div", {class: "figure", id}, h("div", {class: "value"}, value ?? "–"), h("div", {class: "label"}, label));
}

// -- settings -------------------------------------------------------------------------

const settings = {
  current: null,
  build(section) {
    fill(section,
      h("h2", {}, "Per-user settings"),
      h("form", {id: "set-form", onsubmit: (e) => { e.preventDefault(); guarded(settings.fetch); }},
        ...userFields("set"), h("button", {id: "set-load", type: "submit"}, "Load")),
      h("div", {id: "set-out"}));
  },
  async load() {
    $("set-user").value = selection.user;
    $("set-friend").value = selection.friend;
  },
  path() {
    return userPath(val("set-user"), "settings");
  },
  async fetch() {
    remember("set");
    let data;
    try {
      data = await api("GET", settings.path(), {params: {friend_id: val("set-friend") || undefined}});
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && !err.param) {
        fill($("set-out"), h("p", {id: "set-unavailable", class: "muted"},
          "This gateway has no per-user settings API (GET /v1/admin/users/{user}/settings answered 404)."));
        return;
      }
      throw err;
    }
    settings.render(data);
  },
  render(data) {
    settings.current = data;
    const locked = new Set(data.locked || []);
    const rows = Object.entries(data.settings).map(([name, value]) => {
      const bounds = (data.bounds || {})[name] || {};
      let input;
      if (typeof value === "boolean") input = h("input", {type: "checkbox", checked: value});
      else if (typeof value === "number") {
        const integer = Number.isInteger(value) && Number.isInteger(bounds.minimum ?? 0) && Number.isInteger(bounds.maximum ?? 0);
        input = h("input", {type: "number", value: String(value), min: bounds.minimum, max: bounds.maximum, step: integer ? 1 : "any"});
      } else input = h("input", {value: value === null ? "" : String(value)});
      input.classList.add("set-input");
      input.dataset.field = name;
      if (locked.has(name)) input.disabled = true;
      const overridden = Object.prototype.hasOwnProperty.call(data.overrides || {}, name);
      // nobody set it: the plugins use their own config, which is what recall really applies
      const inUse = Object.entries((data.in_use || {})[name] || {});
      return h("tr", {class: "setting", dataset: {field: name}},
        h("td", {}, name), h("td", {}, input),
        h("td", {}, locked.has(name) ? h("span", {class: "chip"}, "locked") : null,
          overridden ? h("span", {class: "chip"}, "override") : h("span", {class: "muted"}, inUse.length ? "not set" : "default"),
          inUse.length ? h("div", {class: "set-in-use"}, "in use: " + inUse.map(([plugin, v]) => `${plugin} ${v}`).join(", ")) : null),
        h("td", {class: "muted"}, bounds.minimum !== undefined ? `${bounds.minimum} … ${bounds.maximum}` : ""),
        h("td", {}, overridden && !locked.has(name) ? h("button", {type: "button", class: "secondary set-reset",
          onclick: () => guarded(() => settings.save({[name]: null}))}, "Use default") : null));
    });
    fill($("set-out"),
      table([{title: "Setting"}, {title: "Value"}, {title: "Source"}, {title: "Bounds"}, {title: ""}], rows, {id: "set-table"}),
      h("button", {id: "set-save", type: "button", onclick: () => guarded(settings.saveForm)}, "Save changes"));
  },
  async saveForm() {
    const change = {};
    for (const input of document.querySelectorAll("#set-table .set-input")) {
      if (input.disabled) continue;
      const name = input.dataset.field;
      const old = settings.current.settings[name];
      let value;
      if (input.type === "checkbox") value = input.checked;
      else if (input.type === "number") value = input.value === "" ? null : Number(input.value);
      else value = input.value === "" ? null : input.value;
      if (value !== old) change[name] = value;
    }
    if (!Object.keys(change).length) { say("Nothing changed."); return; }
    await settings.save(change);
  },
  async save(change) {
    const data = await api("PUT", settings.path(), {params: {friend_id: val("set-friend") || undefined}, body: change});
    settings.render(data);
    say(`Saved: ${Object.keys(change).join(", ")}.`);
  },
};

// -- keys -----------------------------------------------------------------------------

const keys = {
  build(section) {
    fill(section,
      h("h2", {}, "Keys"),
      h("form", {id: "key-form", onsubmit: (e) => { e.preventDefault(); guarded(keys.create); }},
        h("label", {}, "User", h("input", {id: "key-user", required: true, list: "known-users"})),
        h("label", {}, "Friend", h("input", {id: "key-friend", value: "default", list: "known-friends"})),
        h("label", {}, "Models (globs, comma-separated)", h("input", {id: "key-models", value: "*"})),
        h("label", {class: "inline"}, h("input", {id: "key-admin", type: "checkbox"}), "admin"),
        h("label", {class: "inline"}, h("input", {id: "key-service", type: "checkbox"}), "service"),
        h("label", {class: "inline", title: "A group-chat bot's key: each message's name is a speaker with memories of its own (a service key)"},
          h("input", {id: "key-group", type: "checkbox", onchange: (e) => { if (e.target.checked) $("key-service").checked = true; }}),
          "group"),
        h("label", {class: "inline", title: "Keep only the earlier messages relevant to the last one (the context_selection plugin, when gateway.yaml lists it)"},
          h("input", {id: "key-context", type: "checkbox"}), "context selection"),
        h("label", {}, "Bot names (comma-separated, for context selection)", h("input", {id: "key-bot-names", value: ""})),
        h("button", {id: "key-create", type: "submit"}, "Create key")),
      h("div", {id: "key-new"}),
      h("div", {id: "keys-list"}));
  },
  async load() {
    const data = await api("GET", "/v1/admin/keys");
    const rows = data.data.map((k) => h("tr", {class: "key-row", dataset: {keyId: k.key_id}},
      h("td", {}, k.key_id), h("td", {}, k.user_id), h("td", {}, k.friend_id),
      h("td", {}, k.admin ? h("span", {class: "chip"}, "admin") : null, k.service ? h("span", {class: "chip"}, "service") : null,
        k.group ? h("span", {class: "chip key-group"}, "group") : null),
      h("td", {}, k.allowed_models.join(", ")), h("td", {}, k.source), h("td", {}, fmtTime(k.created_at)),
      h("td", {class: "key-state"}, k.revoked_at ? `revoked ${fmtTime(k.revoked_at)}` : "active"),
      h("td", {}, k.source === "store" && !k.revoked_at ? confirmButton("Revoke", "Really revoke?", () => guarded(async () => {
        await api("POST", `/v1/admin/keys/${encodeURIComponent(k.key_id)}/revoke`);
        say(`Revoked ${k.key_id}.`);
        await keys.load();
      }), {class: "danger key-revoke"}) : null)));
    fill($("keys-list"), table([{title: "Id"}, {title: "User"}, {title: "Friend"}, {title: "Kind"}, {title: "Models"},
      {title: "Source"}, {title: "Created"}, {title: "State"}, {title: ""}], rows, {id: "keys-table"}));
  },
  async create() {
    const models = val("key-models").split(",").map((m) => m.trim()).filter(Boolean);
    const botNames = val("key-bot-names").split(",").map((m) => m.trim()).filter(Boolean);
    const plugins = $("key-context").checked
      ? {context_selection: {enabled: true, config: botNames.length ? {bot_names: botNames} : {}}} : {};
    const made = await api("POST", "/v1/admin/keys", {body: {user_id: val("key-user"), friend_id: val("key-friend") || "default",
      admin: $("key-admin").checked, service: $("key-service").checked, group: $("key-group").checked, plugins,
      allowed_models: models.length ? models : ["*"]}});
    fill($("key-new"), h("div", {class: "card"}, h("p", {}, `New key ${made.key_id} for ${made.user_id}/${made.friend_id}. `,
      "Copy it now: it is shown once and stored only as its SHA-256."), h("div", {class: "newkey", id: "key-secret"}, made.key)));
    await keys.load();
  },
};

// -- queue ----------------------------------------------------------------------------

const queue = {
  build(section) {
    fill(section,
      h("h2", {}, "Memorization queue"),
      h("div", {class: "bar"}, h("button", {id: "queue-refresh", type: "button", onclick: () => guarded(queue.load)}, "Refresh")),
      h("div", {id: "queue-status"}),
      h("h3", {}, "Dead letters"),
      h("div", {id: "dead-list"}));
  },
  async load() {
    const data = await api("GET", "/v1/admin/queue");
    if (!data.data.length) {
      fill($("queue-status"), h("p", {class: "muted"}, "Memorization is off on this gateway (no memorize plugin)."));
      fill($("dead-list"));
      return;
    }
    fill($("queue-status"), data.data.map((q) => h("div", {class: "card"},
      h("div", {class: "figures"}, figure("waiting + in flight", q.length), figure("pending (delivered)", q.pending),
        figure("retrying", q.retrying), figure("dead letters", q.dead, "queue-dead-count"), figure("lag (s)", fmtNum(q.lag_seconds, 1)),
        figure("buffered here", q.buffered)),
      h("p", {class: "muted queue-streams"}, `${q.streams.length === 1 ? "Stream" : "Streams"} ${q.streams.join(", ")}, group ${q.group}.`),
      table([{title: "Worker"}, {title: "Pending", cls: "num"}, {title: "Idle (s)", cls: "num"}],
        q.workers.map((w) => h("tr", {}, h("td", {}, w.name), h("td", {class: "num"}, w.pending),
          h("td", {class: "num"}, fmtNum(w.idle_ms / 1000, 1)))), {id: "workers-table"}))));
    const dead = await api("GET", "/v1/admin/queue/dead", {params: {queue: data.data[0].prefix}});
    const prefix = data.data[0].prefix;
    const rows = dead.data.flatMap((d) => {
      const detail = h("tr", {class: "dead-detail", hidden: true}, h("td", {colspan: 5}, h("pre", {}, pretty(d.job))));
      const act = async (method, path, done) => {
        const result = await api(method, path, {params: {queue: prefix}});
        say(done(result));
        await queue.load();
      };
      return [h("tr", {class: "dead-row", dataset: {deadId: d.id}},
        h("td", {}, fmtTime(d.dead_at)), h("td", {}, d.user_id ? `${d.user_id} / ${d.friend_id}` : "?"),
        h("td", {class: "dead-error"}, d.error.length > 300 ? d.error.slice(0, 300) + "…" : d.error),
        h("td", {}, h("button", {type: "button", class: "secondary dead-inspect", onclick: () => { detail.hidden = !detail.hidden; }}, "Inspect"), " ",
          h("button", {type: "button", class: "dead-retry", onclick: () => guarded(() => act("POST", `/v1/admin/queue/dead/${d.id}/retry`,
            (r) => `Requeued ${d.id} as ${r.requeued_as}.`))}, "Retry"), " ",
          confirmButton("Drop", "Really drop?", () => guarded(() => act("DELETE", `/v1/admin/queue/dead/${d.id}`, () => `Dropped ${d.id}.`)),
            {class: "danger dead-drop"}))), detail];
    });
    fill($("dead-list"), rows.length ? table([{title: "Dead since"}, {title: "Tenant"}, {title: "Error"}, {title: ""}], rows,
      {id: "dead-table"}) : h("p", {class: "muted", id: "dead-none"}, "No dead letters."));
  },
};

// -- statistics -----------------------------------------------------------------------

const stats = {
  build(section) {
    fill(section, h("h2", {}, "Statistics"),
      h("div", {class: "bar"}, h("button", {id: "stats-refresh", type: "button", onclick: () => guarded(stats.load)}, "Refresh")),
      h("div", {id: "stats-out"}));
  },
  async load() {
    const s = await api("GET", "/v1/admin/stats");
    const m = s.memories;
    const most = Math.max(1, ...Object.values(m.by_type));
    const r = s.recall;
    fill($("stats-out"),
      h("div", {class: "figures"}, figure("memories", m.total, "stats-total"), figure("retired", m.retired), figure("users with memories", m.users),
        ...Object.entries(m.by_scope).map(([k, v]) => figure(k, v))),
      m.truncated ? h("p", {class: "muted"}, "Counted over the first records only (truncated).") : null,
      h("h3", {}, "Memories per type"),
      table([{title: "Type"}, {title: "Count", cls: "num"}, {title: ""}], Object.entries(m.by_type).map(([type, count]) =>
        h("tr", {class: "type-row", dataset: {type}}, h("td", {}, type), h("td", {class: "num"}, count),
          h("td", {class: "bar-cell"}, h("div", {class: "bar-fill", style: {width: `${Math.round((count / most) * 100)}%`}})))),
      {id: "stats-types"}),
      h("h3", {}, "Recall latency (request phase of chat calls)"),
      h("div", {class: "figures"}, figure("calls", r.count), figure("mean ms", fmtNum(r.mean_ms, 1)),
        figure("p50 ≤ ms", fmtNum(r.p50_ms, 1)), figure("p95 ≤ ms", fmtNum(r.p95_ms, 1)), figure("p99 ≤ ms", fmtNum(r.p99_ms, 1))),
      h("h3", {}, "Degradations (x-memgate-degraded entries sent)"),
      s.degradations.length ? table([{title: "Plugin"}, {title: "Reason"}, {title: "Count", cls: "num"}],
        s.degradations.map((d) => h("tr", {}, h("td", {}, d.plugin), h("td", {}, d.reason), h("td", {class: "num"}, d.count))))
        : h("p", {class: "muted"}, "None since the gateway started."),
      h("h3", {}, "Plugin failures"),
      s.plugin_failures.length ? table([{title: "Plugin"}, {title: "Hook"}, {title: "Reason"}, {title: "Count", cls: "num"}],
        s.plugin_failures.map((d) => h("tr", {}, h("td", {}, d.plugin), h("td", {}, d.hook), h("td", {}, d.reason),
          h("td", {class: "num"}, d.count)))) : h("p", {class: "muted"}, "None since the gateway started."));
  },
};

export const pages = {users, memories, inspector, settings, keys, queue, stats};
