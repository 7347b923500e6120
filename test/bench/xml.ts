/**
 * A small well-formedness check for the generated SVG (no DOM parser in the
 * Node test project): every tag closes in order, attributes are quoted, and
 * every & starts an entity.
 */
export function checkXml(text: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:-]+=(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(text); m !== null; m = tag.exec(text)) {
    const between = text.slice(last, m.index);
    if (between.includes('<') || between.includes('>'))
      problems.push(`stray angle bracket near offset ${last}: ${between.slice(0, 40)}`);
    last = tag.lastIndex;
    const [, closing, name, , selfClosing] = m;
    if (closing === '/') {
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open ?? 'nothing'}>`);
    } else if (selfClosing !== '/') stack.push(name!);
  }
  if (text.slice(last).trim() !== '') problems.push(`text after the root element: ${text.slice(last, last + 40)}`);
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(', ')}`);
  for (const m of text.matchAll(/&(?!amp;|lt;|gt;|quot;|apos;|#\d+;)/g)) problems.push(`bare & at ${m.index}`);
  return problems;
}

/** How many data markers (class="pt") the SVG has. */
export function countPoints(svg: string): number {
  return svg.match(/class="pt"/g)?.length ?? 0;
}
