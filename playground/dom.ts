/** A few DOM helpers: the playground needs no framework. */

type Child = Node | string | number | undefined | false

/** Creates an element with attributes (`class`, `data-*`, ...) and children; falsy children are skipped. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value)
  for (const child of children) {
    if (child === undefined || child === false) continue
    element.append(typeof child === 'number' ? String(child) : child)
  }
  return element
}

/** The element with `id`; throws when the page lacks it. */
export function byId(id: string): HTMLElement {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`#${id} is missing from the page`)
  return element
}

/** Replaces the children of `parent`. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(
    ...children
      .filter((child): child is Node | string | number => child !== undefined && child !== false)
      .map((child) => (typeof child === 'number' ? String(child) : child)),
  )
}

/** `12:03:04.123` (or `03:04.123` without the hour), local time. */
export function clock(time: number, hours = true): string {
  const date = new Date(time)
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0')
  const rest = `${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
  return hours ? `${pad(date.getHours())}:${rest}` : rest
}
