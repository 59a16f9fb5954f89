// Form parts the pages share (the table client's and the operators' console): a
// labelled field and an input made in one call.
import { h } from "./board.js";

/** A label beside its input. */
export function field(label, input) {
  return h("label", "field", h("span", "", label), input);
}

/** An input of ``type`` holding ``value`` (a checkbox: checked), with ``attrs`` set. */
export function input(type, value, attrs = {}) {
  const el = h("input", "");
  el.type = type;
  if (type === "checkbox") el.checked = !!value; else el.value = value;
  Object.assign(el, attrs);
  return el;
}
