// The rules pages (docs/rules/*.md, served as static/rules/): each rule set's rules in
// Chinese and English, their tables generated from the rule sets' data. Drawn from the
// little Markdown they are written in: headings, paragraphs, tables, **bold**.
import { h } from "./board.js";
import { RULES, rulesName } from "./text.js";

const PAGES = new URL("../rules/", import.meta.url);

/** Text with **bold** as elements. */
function inline(text) {
  const span = h("span", "");
  text.split(/(\*\*[^*]+\*\*)/).forEach((part) => {
    if (part.startsWith("**") && part.endsWith("**")) span.append(h("b", "", part.slice(2, -2)));
    else if (part) span.append(part);
  });
  return span;
}

const cells = (line) => line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());

/** A page's Markdown as elements (comments dropped). */
export function markdownEl(text) {
  const out = h("div", "rules-text");
  const lines = text.replace(/<!--.*?-->/g, "").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const head = /^(#{1,3}) (.*)$/.exec(line);
    if (head) { out.append(h(`h${head[1].length + 1}`, "", inline(head[2]))); continue; }
    if (line.startsWith("|")) {
      const table = h("table", "rules-table");
      const top = h("tr", "");
      for (const c of cells(line)) top.append(h("th", "", inline(c)));
      table.append(top);
      i += 1; // the |---| row
      while (i + 1 < lines.length && lines[i + 1].startsWith("|")) {
        i += 1;
        const tr = h("tr", "");
        for (const c of cells(lines[i])) tr.append(h("td", "", inline(c)));
        table.append(tr);
      }
      out.append(h("div", "scroll", table));
      continue;
    }
    if (line.trim()) out.append(h("p", "", inline(line)));
  }
  return out;
}

/** One rule set's page, fetched from the server (same version as the client). */
export async function rulesEl(name) {
  const box = h("div", "rules-page");
  box.dataset.rules = name;
  try {
    const answer = await fetch(new URL(`${name}.md`, PAGES));
    if (!answer.ok) throw new Error(`${answer.status}`);
    box.append(markdownEl(await answer.text()));
  } catch (e) {
    box.append(h("p", "error", `规则载入失败 the rules did not load (${e.message})`));
  }
  return box;
}

/** The rules page of the site: the four rule sets, one shown. */
export async function rulesPage(root, name) {
  const pick = name in RULES ? name : "sichuan";
  const tabs = h("div", "row rules-tabs");
  for (const key of Object.keys(RULES)) {
    const a = h("a", `button${key === pick ? " primary" : ""}`, rulesName(key));
    a.href = `#/rules/${key}`;
    tabs.append(a);
  }
  const page = h("div", "panel rules", h("a", "home", "← 大厅 Lobby"), h("h2", "", "规则 Rules"), tabs);
  page.querySelector(".home").href = "#/";
  root.replaceChildren(page);
  page.append(await rulesEl(pick));
}
