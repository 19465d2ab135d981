// WCAG AA contrast of every visible text and icon (see contrast.py); returns the failures.
() => {
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, under) => { const a = top[3] + under[3] * (1 - top[3]);
    if (a === 0) return [0, 0, 0, 0];
    return [0, 1, 2].map(i => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a).concat([a]); };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const page = parse(getComputedStyle(document.body).backgroundColor);
  const base = page[3] > 0 ? over(page, [255, 255, 255, 1]) : [255, 255, 255, 1];
  const behind = el => { const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor); if (bg[3] > 0) layers.push(bg); if (bg[3] >= 1) break; }
    let c = base; for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c); return c; };
  const opacity = el => { let o = 1; for (let e = el; e && e.nodeType === 1; e = e.parentElement)
    o *= Number(getComputedStyle(e).opacity); return o; };
  const failures = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || style.visibility === 'hidden' || el.closest('[aria-hidden=true] svg')) continue;
    if (el.closest('.q-notification, .q-tooltip, [disabled], .disabled, .q-btn--disabled, .q-field--disabled')) continue;
    if (el.closest('[style*="display: none"]') || el.offsetParent === null && style.position !== 'fixed') continue;
    const icon = el.closest('.q-icon, .material-icons') !== null;
    const bg = behind(el);
    const fg = parse(style.color);
    const seen = over([fg[0], fg[1], fg[2], fg[3] * opacity(el)], bg);
    const a = lum(seen), b = lum(bg);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const large = size >= 24 || (size >= 18.66 && bold);
    const need = icon || large ? 3.0 : 4.5;
    if (ratio < need) failures.push({text: el.textContent.trim().slice(0, 60), ratio: Math.round(ratio * 100) / 100,
      need, color: style.color, background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')',
      element: el.tagName.toLowerCase() + '.' + String(el.className).split(' ').slice(0, 4).join('.')});
  }
  return failures;
}
