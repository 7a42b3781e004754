// A model for the viewer where there is no kernel (a saved HTML file, an exported notebook):
// the same get/set/on/off/save_changes an anywidget model has, over plain data. Folding
// needs the kernel's layout, so such a viewer is not `live`.

export function localModel(initial) {
  const data = { ...initial, live: false };
  const handlers = new Map();
  const changed = new Set();
  return {
    get: (name) => data[name],
    set(name, value) { data[name] = value; changed.add(name); },
    on(event, fn) { if (!handlers.has(event)) handlers.set(event, new Set()); handlers.get(event).add(fn); },
    off(event, fn) { if (handlers.has(event)) handlers.get(event).delete(fn); },
    save_changes() {
      const names = [...changed];
      changed.clear();
      for (const name of names) for (const fn of handlers.get(`change:${name}`) || []) fn();
    },
  };
}
