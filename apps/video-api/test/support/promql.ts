/** A label matcher of a PromQL selector: `name op "value"`. */
export interface Matcher {
  label: string
  op: '=' | '!=' | '=~' | '!~'
  value: string
}

/** A metric a PromQL expression reads, with the label matchers of that selector. */
export interface Selector {
  metric: string
  matchers: Matcher[]
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
])

/**
 * The metric selectors of a PromQL expression: every identifier that is not a function call, a
 * keyword, a label list of `by`/`without`/`on`/`ignoring`/`group_*`, a range or a number, with the
 * matchers between the braces that follow it. Enough for dashboards and alert rules (not a full
 * parser: a bare `{__name__=…}` selector is not understood).
 */
export function selectors(expr: string): Selector[] {
  const text = expr
    .replace(/\[[^\]]*\]/g, ' ') // ranges, [5m] or [$__rate_interval]
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  const found: Selector[] = []
  const identifier = /(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g
  for (const match of text.matchAll(identifier)) {
    const [, name, braces, call] = match
    if (call || KEYWORDS.has(name!.toLowerCase())) continue
    found.push({ metric: name!, matchers: braces ? parseMatchers(braces) : [] })
  }
  return found
}

function parseMatchers(braces: string): Matcher[] {
  const matcher = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g
  return [...braces.matchAll(matcher)].map(([, label, op, value]) => ({
    label: label!,
    op: op as Matcher['op'],
    value: value!,
  }))
}

const HISTOGRAM_SERIES = ['_bucket', '_sum', '_count']

/**
 * The series of a Prometheus text exposition: name → label sets of its samples. A metric declared by
 * `# TYPE` without samples yet (a labelled counter before its first increment) is there with no label
 * sets; a histogram's declaration stands for its `_bucket`, `_sum` and `_count` series.
 */
export function exposition(text: string): Map<string, Record<string, string>[]> {
  const samples = new Map<string, Record<string, string>[]>()
  for (const line of text.split('\n')) {
    const declared = /^# TYPE (\S+) (\S+)/.exec(line)
    if (declared) {
      const names =
        declared[2] === 'histogram' ? HISTOGRAM_SERIES.map((s) => declared[1] + s) : [declared[1]!]
      for (const name of names) if (!samples.has(name)) samples.set(name, [])
    }
    if (line.length === 0 || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line)
    if (!match) continue
    const labels: Record<string, string> = {}
    for (const [, key, value] of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!
    const list = samples.get(match[1]!) ?? []
    list.push(labels)
    samples.set(match[1]!, list)
  }
  return samples
}
