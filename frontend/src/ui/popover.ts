/** Where a popover that opens above its button goes: fixed to the screen, never past its edges (8 px margin). */
export function placeAbove(anchor: HTMLElement, panel: HTMLElement, width = 420): Record<string, string> {
  const margin = 8;
  const rect = anchor.getBoundingClientRect();
  const w = Math.min(width, window.innerWidth - 2 * margin);
  const left = Math.max(margin, Math.min(rect.left, window.innerWidth - w - margin));
  void panel;
  return {
    position: "fixed",
    left: `${left}px`,
    width: `${w}px`,
    bottom: `${window.innerHeight - rect.top + 6}px`,
    maxHeight: `${Math.min(360, Math.max(120, rect.top - 2 * margin))}px`,
  };
}
