// The Cairn console's page: a hash-routed, read-only view of the backend's stacks.
//
// Everything shown comes from programs, providers and state files and is untrusted: it enters
// the document only as text (textContent, createTextNode, setAttribute of plain attributes),
// never as markup. There is no innerHTML, no inline handler, no eval.
"use strict";

(function () {
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  const backendLabel = document.getElementById("backend");
  const SVG = "http://www.w3.org/2000/svg";
  let teardown = [];
  // The live view saw an update end: the next page says so.
  let justFinished = false;

  // ---- DOM helpers: text only ---------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "on") {
        for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
      } else {
        node.setAttribute(key, value === true ? "" : String(value));
      }
    }
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function link(text, hash, attrs) {
    return el("a", Object.assign({ href: hash }, attrs || {}), text);
  }

  // ---- Data ---------------------------------------------------------------------------------

  async function api(path, params) {
    const query = new URLSearchParams(params || {}).toString();
    const response = await fetch("/api/" + path + (query ? "?" + query : ""), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = { error: response.status + " " + response.statusText };
    }
    if (!response.ok) throw new Error((body && body.error) || response.statusText);
    return body;
  }

  function stackHash(project, stack, tab, extra) {
    let hash = "#/stack/" + encodeURIComponent(project) + "/" + encodeURIComponent(stack);
    if (tab) hash += "/" + tab;
    if (extra) hash += "/" + encodeURIComponent(extra);
    return hash;
  }

  // ---- Formatting ---------------------------------------------------------------------------

  function when(seconds) {
    if (!seconds) return "—";
    const date = new Date(seconds * 1000);
    return date.toLocaleString();
  }

  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + " ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    return Math.floor(s / 60) + " min " + Math.round(s % 60) + " s";
  }

  // An update's duration: its record keeps whole seconds.
  function seconds(s) {
    return s < 1 ? "under 1 s" : duration(s * 1000);
  }

  function isSecret(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v) && v["$secret"] === true;
  }

  // A value as text with masked secrets marked; JSON-like, indented.
  function valueView(value) {
    const pre = el("pre", { class: "value" });
    const write = (v, indent) => {
      if (isSecret(v)) {
        if ("value" in v) {
          pre.appendChild(el("span", { class: "secret shown", title: "secret (shown with --show-secrets)" }, "🔓 "));
          write(v.value, indent);
        } else {
          pre.appendChild(el("span", { class: "secret", title: v.error || "secret: start the console with --show-secrets to see it" }, "[secret]"));
        }
        return;
      }
      if (Array.isArray(v)) {
        if (v.length === 0) return append(pre, ["[]"]);
        append(pre, ["[\n"]);
        v.forEach((item, i) => {
          append(pre, [indent + "  "]);
          write(item, indent + "  ");
          append(pre, [i + 1 < v.length ? ",\n" : "\n"]);
        });
        return append(pre, [indent + "]"]);
      }
      if (v !== null && typeof v === "object") {
        const keys = Object.keys(v);
        if (keys.length === 0) return append(pre, ["{}"]);
        append(pre, ["{\n"]);
        keys.forEach((key, i) => {
          append(pre, [indent + "  ", el("span", { class: "key" }, JSON.stringify(key)), ": "]);
          write(v[key], indent + "  ");
          append(pre, [i + 1 < keys.length ? ",\n" : "\n"]);
        });
        return append(pre, [indent + "}"]);
      }
      append(pre, [JSON.stringify(v)]);
    };
    write(value, "");
    return pre;
  }

  function propertyTable(map) {
    const keys = Object.keys(map || {});
    if (keys.length === 0) return el("p", { class: "muted" }, "None.");
    return el("table", { class: "props" },
      el("tbody", {}, keys.map((key) => el("tr", {}, el("th", {}, key), el("td", {}, valueView(map[key]))))));
  }

  function opBadge(op) {
    return el("span", { class: "op op-" + String(op).replace(/[^a-z-]/g, "") }, op);
  }

  function changesText(changes) {
    const parts = [];
    for (const [kind, count] of Object.entries(changes || {})) {
      if (kind !== "same") parts.push(count + " " + kind);
    }
    if (changes && changes.same) parts.push(changes.same + " unchanged");
    return parts.join(", ") || "no changes";
  }

  function failure(error) {
    return el("p", { class: "error", role: "alert" }, "Error: " + (error && error.message ? error.message : error));
  }

  function setCrumbs(...items) {
    clear(crumbs);
    items.forEach((item, i) => {
      if (i) append(crumbs, [el("span", { class: "sep" }, " / ")]);
      append(crumbs, [item]);
    });
  }

  // ---- Stacks -------------------------------------------------------------------------------

  async function showStacks() {
    setCrumbs(link("Stacks", "#/"));
    const data = await api("stacks");
    backendLabel.textContent = data.backend + (data.showSecrets ? " · secrets shown" : "");
    if (data.stacks.length === 0) {
      return [el("h1", {}, "Stacks"), el("p", { class: "muted" }, "This backend has no stacks yet.")];
    }
    const rows = data.stacks.map((s) =>
      el("tr", { "data-stack": s.project + "/" + s.stack },
        el("td", {}, s.project),
        el("td", {}, link(s.stack, stackHash(s.project, s.stack)), s.running ? el("span", { class: "badge live" }, "update running") : null),
        el("td", {}, s.lastUpdate ? new Date(s.lastUpdate).toLocaleString() : "never"),
        el("td", { class: "num" }, String(s.resourceCount)),
        el("td", {}, Object.entries(s.tags || {}).map(([k, v]) => el("span", { class: "tag", title: k + ": " + v }, k + ": " + v)))));
    return [
      el("h1", {}, "Stacks"),
      el("table", { class: "grid", id: "stacks" },
        el("thead", {}, el("tr", {}, ["Project", "Stack", "Last update", "Resources", "Tags"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)),
    ];
  }

  // ---- A stack ------------------------------------------------------------------------------

  const TABS = [["resources", "Resources"], ["graph", "Graph"], ["outputs", "Outputs"], ["config", "Configuration"], ["history", "History"]];

  async function showStack(project, stack, tab, selected) {
    tab = tab || "resources";
    setCrumbs(link("Stacks", "#/"), el("span", {}, project), link(stack, stackHash(project, stack)));
    const data = await api("stack", { project, stack });
    const live = el("section", { id: "live", class: "live", hidden: true });
    const nav = el("nav", { class: "tabs", role: "tablist" },
      TABS.map(([id, label]) => link(label, stackHash(project, stack, id), { class: id === tab ? "active" : null, role: "tab", "aria-selected": id === tab ? "true" : "false", id: "tab-" + id })));
    const body = el("section", { id: "tab-body" });
    followLive(project, stack, live);
    const content = {
      resources: () => resourcesTab(project, stack, data, selected),
      graph: () => graphTab(project, stack, data, selected),
      outputs: () => [el("h2", {}, "Outputs"), propertyTable(data.outputs)],
      config: () => configTab(data),
      history: () => historyTab(project, stack),
    }[tab];
    if (!content) throw new Error("no such tab: " + tab);
    append(body, [await content()]);
    return [
      el("h1", {}, stack, el("span", { class: "muted" }, " · " + project)),
      el("p", { class: "muted" }, data.resources.length + " resources · last deployed " + new Date(data.time).toLocaleString()),
      Object.keys(data.tags || {}).length ? el("p", {}, Object.entries(data.tags).map(([k, v]) => el("span", { class: "tag" }, k + ": " + v))) : null,
      live, nav, body,
    ];
  }

  function configTab(data) {
    if (data.config.length === 0) {
      return [el("h2", {}, "Configuration"), el("p", { class: "muted" }, "The latest update recorded no configuration.")];
    }
    return [
      el("h2", {}, "Configuration"),
      el("p", { class: "muted" }, "As the latest update ran with it."),
      el("table", { class: "props", id: "config" }, el("tbody", {}, data.config.map((c) =>
        el("tr", {}, el("th", {}, c.key), el("td", {}, valueView(c.value)))))),
    ];
  }

  // The resource tree: children are built only when their parent is opened, in pages.
  function resourcesTab(project, stack, data, selected) {
    const PAGE = 200;
    const children = new Map();
    const known = new Set(data.resources.map((r) => r.urn));
    for (const r of data.resources) {
      const parent = r.parent && known.has(r.parent) ? r.parent : "";
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(r);
    }
    const details = el("aside", { class: "details", id: "details" }, el("p", { class: "muted" }, "Select a resource to see its properties."));
    const tree = el("ul", { class: "tree", id: "tree", role: "tree" });

    const select = (urn, row) => {
      for (const old of document.querySelectorAll(".tree .selected")) old.classList.remove("selected");
      if (row) row.classList.add("selected");
      history.replaceState(null, "", stackHash(project, stack, "resources", urn));
      showDetails(project, stack, urn, details);
    };

    const renderLevel = (list, parentUrn, into) => {
      const items = children.get(parentUrn) || [];
      let shown = 0;
      const more = () => {
        const page = items.slice(shown, shown + PAGE);
        shown += page.length;
        for (const r of page) into.insertBefore(treeItem(r), moreItem);
        moreItem.hidden = shown >= items.length;
        moreButton.textContent = "Show " + Math.min(PAGE, items.length - shown) + " more of " + (items.length - shown);
      };
      const moreButton = el("button", { type: "button", class: "more", on: { click: more } });
      const moreItem = el("li", {}, moreButton);
      into.appendChild(moreItem);
      more();
    };

    const treeItem = (r) => {
      const kids = children.get(r.urn) || [];
      const row = el("div", { class: "row", role: "treeitem", "data-urn": r.urn, tabindex: "0" },
        kids.length ? el("button", { type: "button", class: "toggle", "aria-label": "expand" }, "▸") : el("span", { class: "toggle" }),
        el("span", { class: "name" }, r.name),
        el("span", { class: "type" }, r.type),
        r.protect ? el("span", { class: "badge" }, "protected") : null,
        r.delete ? el("span", { class: "badge warn" }, "pending delete") : null,
        kids.length ? el("span", { class: "muted" }, " (" + kids.length + ")") : null);
      const item = el("li", {}, row);
      let sub = null;
      const toggle = row.querySelector(".toggle");
      const flip = () => {
        if (sub) {
          sub.hidden = !sub.hidden;
        } else {
          sub = el("ul", { role: "group" });
          item.appendChild(sub);
          renderLevel(kids, r.urn, sub);
        }
        toggle.textContent = sub.hidden ? "▸" : "▾";
      };
      row.addEventListener("click", (event) => {
        if (event.target === toggle && kids.length) return flip();
        select(r.urn, row);
      });
      // The stack itself starts open: its children are what a person looks for first.
      if (!r.parent && r.type === "pulumi:pulumi:Stack" && kids.length) flip();
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter") select(r.urn, row);
      });
      return item;
    };

    const filter = el("input", { type: "search", placeholder: "Filter by name or type", "aria-label": "Filter resources", id: "filter" });
    const matches = el("ul", { class: "tree", hidden: true });
    filter.addEventListener("input", () => {
      const text = filter.value.trim().toLowerCase();
      clear(matches);
      tree.hidden = text !== "";
      matches.hidden = text === "";
      if (!text) return;
      const found = data.resources.filter((r) => r.name.toLowerCase().includes(text) || r.type.toLowerCase().includes(text));
      for (const r of found.slice(0, PAGE)) {
        const row = el("div", { class: "row", "data-urn": r.urn, tabindex: "0" }, el("span", { class: "name" }, r.name), el("span", { class: "type" }, r.type));
        row.addEventListener("click", () => select(r.urn, row));
        matches.appendChild(el("li", {}, row));
      }
      if (found.length > PAGE) matches.appendChild(el("li", { class: "muted" }, (found.length - PAGE) + " more: narrow the filter"));
    });
    renderLevel(children.get("") || [], "", tree);
    if (selected) showDetails(project, stack, selected, details);
    return el("div", { class: "split" }, el("div", { class: "pane" }, filter, tree, matches), details);
  }

  async function showDetails(project, stack, urn, into) {
    clear(into);
    into.appendChild(el("p", { class: "muted" }, "Loading…"));
    let r;
    try {
      r = await api("resource", { project, stack, urn });
    } catch (error) {
      clear(into);
      into.appendChild(failure(error));
      return;
    }
    clear(into);
    const jump = (target) => link(target.split("::").pop(), stackHash(project, stack, "resources", target), { title: target });
    const graphLink = link("Show in the graph", stackHash(project, stack, "graph", urn), { class: "button" });
    if (r.missing) {
      append(into, [el("h2", {}, urn.split("::").pop()), el("p", { class: "error" }, "Named by other resources, but not in the state.")]);
      return;
    }
    const facts = [
      ["Type", r.type],
      ["URN", r.urn],
      ["ID", r.id || "—"],
      ["Provider", r.provider ? jump(r.provider.urn) : "—"],
      ["Parent", r.parent ? jump(r.parent) : "—"],
      ["Protected", r.protect ? "yes" : "no"],
    ];
    append(into, [
      el("h2", { id: "details-name" }, r.name),
      graphLink,
      el("dl", { class: "facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
      r.initErrors && r.initErrors.length ? el("p", { class: "error" }, "Initialization errors: " + r.initErrors.join("; ")) : null,
      el("h3", {}, "Inputs"), propertyTable(r.inputs),
      el("h3", {}, "Outputs"), propertyTable(r.outputs),
      el("h3", {}, "Depends on"),
      r.dependencies.length ? el("ul", { class: "links" }, r.dependencies.map((d) => el("li", {}, jump(d)))) : el("p", { class: "muted" }, "Nothing."),
      el("h3", {}, "Depended on by"),
      r.dependents.length
        ? el("ul", { class: "links", id: "dependents" }, r.dependents.map((d) => el("li", {}, jump(d.urn), d.properties.length ? el("span", { class: "muted" }, " (" + d.properties.join(", ") + ")") : null)))
        : el("p", { class: "muted" }, "Nothing."),
      r.children.length ? [el("h3", {}, "Children"), el("ul", { class: "links" }, r.children.slice(0, 200).map((c) => el("li", {}, jump(c))))] : null,
    ]);
  }

  // ---- The graph ----------------------------------------------------------------------------

  async function graphTab(project, stack, data, focus) {
    const scene = await api("graph", focus ? { project, stack, focus } : { project, stack });
    const details = el("aside", { class: "details", id: "details" }, el("p", { class: "muted" }, "Select a resource. Drag to pan, scroll to zoom, double-click a resource to centre the graph on it."));
    const note = scene.whole
      ? el("p", { class: "muted" }, "All " + scene.total + " resources.")
      : el("p", { class: "muted" }, "The neighbourhood of ", el("strong", {}, (scene.focus || "").split("::").pop()),
        ": " + scene.nodes.length + " of " + scene.total + " resources" + (scene.omitted ? " (" + scene.omitted + " more nearby not drawn)" : "") + ". Double-click a resource to move there.");
    if (scene.nodes.length === 0) return [note, el("p", { class: "muted" }, "Nothing to draw.")];
    const world = svg("g", { class: "world" });
    const canvas = svg("svg", { class: "graph", id: "graph", role: "img", "aria-label": "Dependency graph" },
      svg("defs", {},
        svg("marker", { id: "arrow-dependency", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-dependency" })),
        svg("marker", { id: "arrow-parent", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-parent" }))),
      world);
    for (const edge of scene.edges) {
      world.appendChild(svg("path", { d: edge.path, class: "edge " + (edge.kind === "parent" ? "parent" : "dependency"), "marker-end": "url(#arrow-" + (edge.kind === "parent" ? "parent" : "dependency") + ")" }));
    }
    const boxes = new Map();
    for (const node of scene.nodes) {
      const box = svg("g", { class: "node" + (node.urn === scene.focus ? " focus" : ""), "data-urn": node.urn, tabindex: "0" },
        svg("title", {}, node.type + "\n" + node.urn),
        svg("rect", { x: node.x, y: node.y, width: node.w, height: node.h, rx: "4" }),
        svg("text", { x: node.x + node.w / 2, y: node.y + node.h / 2, "text-anchor": "middle", "dominant-baseline": "central" }, node.label));
      box.addEventListener("click", () => {
        for (const old of canvas.querySelectorAll(".node.selected")) old.classList.remove("selected");
        box.classList.add("selected");
        showDetails(project, stack, node.urn, details);
      });
      box.addEventListener("dblclick", () => { location.hash = stackHash(project, stack, "graph", node.urn); });
      world.appendChild(box);
      boxes.set(node.urn, box);
    }
    // Pan and zoom by a transform on the world group.
    let view = { x: 0, y: 0, k: 1 };
    const apply = () => world.setAttribute("transform", "translate(" + view.x + " " + view.y + ") scale(" + view.k + ")");
    const fit = () => {
      const rect = canvas.getBoundingClientRect();
      const k = Math.min(rect.width / (scene.width + 40), rect.height / (scene.height + 40), 1.5);
      view = { k, x: (rect.width - scene.width * k) / 2, y: (rect.height - scene.height * k) / 2 };
      apply();
    };
    const zoom = (factor, cx, cy) => {
      const k = Math.max(0.05, Math.min(8, view.k * factor));
      view.x = cx - (cx - view.x) * (k / view.k);
      view.y = cy - (cy - view.y) * (k / view.k);
      view.k = k;
      apply();
    };
    canvas.addEventListener("wheel", (event) => {
      event.preventDefault();
      const rect = canvas.getBoundingClientRect();
      zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - rect.left, event.clientY - rect.top);
    }, { passive: false });
    let drag = null;
    canvas.addEventListener("pointerdown", (event) => { drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y }; });
    canvas.addEventListener("pointermove", (event) => {
      if (!drag) return;
      view.x = drag.vx + event.clientX - drag.x;
      view.y = drag.vy + event.clientY - drag.y;
      apply();
    });
    const stop = () => { drag = null; };
    canvas.addEventListener("pointerup", stop);
    canvas.addEventListener("pointerleave", stop);
    const center = () => { const r = canvas.getBoundingClientRect(); return [r.width / 2, r.height / 2]; };
    const controls = el("div", { class: "controls" },
      el("button", { type: "button", id: "zoom-in", on: { click: () => zoom(1.25, ...center()) } }, "+"),
      el("button", { type: "button", id: "zoom-out", on: { click: () => zoom(1 / 1.25, ...center()) } }, "−"),
      el("button", { type: "button", id: "zoom-fit", on: { click: fit } }, "Fit"));
    requestAnimationFrame(() => {
      fit();
      if (focus && boxes.has(focus)) boxes.get(focus).dispatchEvent(new Event("click"));
    });
    return [note, el("div", { class: "split" }, el("div", { class: "pane graph-pane" }, controls, canvas), details)];
  }

  // ---- History ------------------------------------------------------------------------------

  async function historyTab(project, stack) {
    const data = await api("history", { project, stack });
    if (data.updates.length === 0) return el("p", { class: "muted" }, "No updates recorded yet.");
    return el("table", { class: "grid", id: "history" },
      el("thead", {}, el("tr", {}, ["#", "Kind", "Result", "Message", "By", "Started", "Duration", "Changes"].map((h) => el("th", {}, h)))),
      el("tbody", {}, data.updates.map((u) => el("tr", { "data-version": u.version },
        el("td", {}, link(String(u.version), "#/update/" + encodeURIComponent(project) + "/" + encodeURIComponent(stack) + "/" + u.version)),
        el("td", {}, u.kind),
        el("td", {}, el("span", { class: "result " + (u.result === "succeeded" ? "ok" : "bad") }, u.result)),
        el("td", {}, u.message || ""),
        el("td", {}, u.user || ""),
        el("td", {}, when(u.startTime)),
        el("td", {}, seconds(u.endTime - u.startTime)),
        el("td", {}, changesText(u.resourceChanges))))));
  }

  async function showUpdate(project, stack, version) {
    setCrumbs(link("Stacks", "#/"), el("span", {}, project), link(stack, stackHash(project, stack)), link("History", stackHash(project, stack, "history")), el("span", {}, "#" + version));
    const u = await api("update", { project, stack, version });
    const steps = u.steps || [];
    const facts = [
      ["Kind", u.kind], ["Result", u.result], ["Message", u.message || "—"],
      ["By", (u.environment && u.environment.user) || "—"], ["Host", (u.environment && u.environment.host) || "—"],
      ["Started", when(u.startTime)], ["Duration", seconds(u.endTime - u.startTime)],
      ["Changes", changesText(u.resourceChanges)],
    ];
    return [
      el("h1", {}, "Update #" + u.version + " of " + stack),
      el("dl", { class: "facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
      el("h2", {}, "Timeline"),
      steps.length ? timeline(steps) : el("p", { class: "muted" }, "This update recorded no steps (it changed nothing, or an older engine ran it)."),
      u.stepsOmitted ? el("p", { class: "muted" }, u.stepsOmitted + " more steps were not recorded.") : null,
      el("h2", {}, "Changes"),
      steps.length ? stepList(steps) : el("p", { class: "muted" }, "None recorded."),
    ];
  }

  // Steps as bars on lanes: steps that overlap in time get different lanes, so what ran in
  // parallel stands side by side.
  function timeline(steps) {
    const SHOWN = 1500;
    const shown = steps.slice().sort((a, b) => a.start - b.start).slice(0, SHOWN);
    const end = Math.max(1, ...shown.map((s) => s.end));
    const laneEnds = [];
    const placed = shown.map((s) => {
      let lane = laneEnds.findIndex((e) => e <= s.start);
      if (lane < 0) { lane = laneEnds.length; laneEnds.push(0); }
      laneEnds[lane] = Math.max(s.end, s.start + end / 1000);
      return { s, lane };
    });
    const LANE = 18, WIDTH = 1000;
    const height = laneEnds.length * LANE + 24;
    const chart = svg("svg", { class: "timeline", id: "timeline", viewBox: "0 0 " + (WIDTH + 10) + " " + height, preserveAspectRatio: "none", role: "img", "aria-label": "Timeline of the update's steps" });
    for (let t = 0; t <= 4; t++) {
      const x = (WIDTH * t) / 4;
      chart.appendChild(svg("line", { x1: x, x2: x, y1: 0, y2: height - 20, class: "tick" }));
      chart.appendChild(svg("text", { x: Math.min(x, WIDTH - 40), y: height - 6, class: "tick-label" }, duration((end * t) / 4)));
    }
    for (const { s, lane } of placed) {
      const x = (s.start / end) * WIDTH;
      const w = Math.max(2, ((s.end - s.start) / end) * WIDTH);
      chart.appendChild(svg("rect", { x, y: lane * LANE + 2, width: w, height: LANE - 4, class: "bar op-" + String(s.op).replace(/[^a-z-]/g, "") + (s.error ? " failed" : ""), "data-urn": s.urn },
        svg("title", {}, s.op + " " + s.urn + "\n" + duration(s.start) + " → " + duration(s.end) + (s.error ? "\n" + s.error : ""))));
    }
    return [
      el("p", { class: "muted" }, shown.length + " steps on " + laneEnds.length + " lanes (steps side by side ran at the same time)" + (steps.length > SHOWN ? "; the first " + SHOWN + " are drawn" : "") + "."),
      el("div", { class: "timeline-box" }, chart),
    ];
  }

  function stepList(steps) {
    return el("ul", { class: "steps", id: "steps" }, steps.map((s) => {
      const item = el("li", { "data-urn": s.urn },
        el("div", { class: "row" }, opBadge(s.op), el("span", { class: "name" }, s.urn.split("::").pop()), el("span", { class: "type" }, s.type),
          el("span", { class: "muted" }, " " + duration(s.end - s.start))),
        s.error ? el("p", { class: "error" }, s.error) : null);
      if (s.diff && s.diff.length) {
        item.appendChild(el("table", { class: "diff" },
          el("thead", {}, el("tr", {}, el("th", {}, "Property"), el("th", {}, "Before"), el("th", {}, "After"))),
          el("tbody", {}, s.diff.map((d) => el("tr", { class: "diff-" + d.kind },
            el("th", {}, (d.kind === "add" ? "+ " : d.kind === "delete" ? "- " : "~ ") + d.path, d.replace ? el("span", { class: "badge warn" }, "forces replacement") : null),
            el("td", {}, "old" in d ? valueView(d.old) : ""),
            el("td", {}, "new" in d ? valueView(d.new) : ""))))));
      }
      return item;
    }));
  }

  // ---- Live ---------------------------------------------------------------------------------

  function followLive(project, stack, panel) {
    const source = new EventSource("/api/live?" + new URLSearchParams({ project, stack }).toString());
    let wasRunning = false;
    source.addEventListener("progress", (event) => {
      const p = JSON.parse(event.data);
      wasRunning = true;
      panel.hidden = false;
      clear(panel);
      const begun = Object.values(p.begun).reduce((a, b) => a + b, 0);
      const ended = Object.values(p.ended).reduce((a, b) => a + b, 0);
      const kinds = Object.keys(p.begun).map((k) => k + " " + (p.ended[k] || 0) + "/" + p.begun[k]).join(", ");
      append(panel, [
        el("h2", {}, el("span", { class: "pulse" }), "Update in progress"),
        el("p", { id: "live-summary" }, ended + " of " + begun + " operations done, " + p.inFlightCount + " running" + (kinds ? " (" + kinds + ")" : "")),
        el("progress", { max: String(Math.max(begun, 1)), value: String(ended), id: "live-progress" }),
        p.inFlight.length ? el("ul", { class: "links" }, p.inFlight.map((o) => el("li", {}, el("span", { class: "badge live" }, o.kind), " " + o.urn.split("::").pop() + " ", el("span", { class: "type" }, o.type)))) : null,
        p.recent.length ? [el("h3", {}, "Finished"), el("ul", { class: "links", id: "live-recent" }, p.recent.map((o) => el("li", {}, el("span", { class: "badge" }, o.kind), " " + o.urn.split("::").pop() + (o.state === "no-change" ? " (no change)" : ""))))] : null,
        el("p", { class: "muted" }, "If nothing moves, the update may have been interrupted: the stack's next command recovers it."),
      ]);
    });
    if (justFinished) {
      justFinished = false;
      panel.hidden = false;
      append(panel, [el("p", { id: "live-done" }, "The update finished; this page shows its result.")]);
    }
    source.addEventListener("idle", () => {
      if (!wasRunning) return;
      // Show the stack as the update left it.
      justFinished = true;
      route();
    });
    teardown.push(() => source.close());
  }

  // ---- Routing ------------------------------------------------------------------------------

  async function route() {
    for (const stop of teardown) stop();
    teardown = [];
    const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    let page;
    try {
      if (parts[0] === "stack" && parts.length >= 3) page = await showStack(parts[1], parts[2], parts[3], parts[4]);
      else if (parts[0] === "update" && parts.length === 4) page = await showUpdate(parts[1], parts[2], parts[3]);
      else page = await showStacks();
    } catch (error) {
      page = failure(error);
    }
    clear(main);
    append(main, [page]);
    document.title = "Cairn console" + (parts[2] ? " · " + parts[2] : "");
  }

  window.addEventListener("hashchange", route);
  route();
})();
