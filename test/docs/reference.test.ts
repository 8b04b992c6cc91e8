/**
 * The reference tables of docs/ checked against the code, read with the TypeScript compiler's checker, so that
 * they cannot drift: every property of each options interface has its row in docs/options.md (no row names
 * another), with the TSDoc's `@defaultValue` and every value of a string union; every code of `TransportErrorCode`
 * has its row in docs/errors.md; every member of `TransportEvent` has its row in docs/events.md with each of its
 * fields, and every metric its row; every option and member of the SDK transport is in docs/migration.md.
 */
import {join} from 'node:path'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'
import {ResumableHTTPClientTransport} from '../../src/index.ts'
import {codeIn, read, root, tableRows, type TableRow} from '../fixtures/markdown.ts'

const config = ts.getParsedCommandLineOfConfigFile(
  join(root, 'tsconfig.json'),
  {},
  {...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {}},
)!
const program = ts.createProgram(
  ['index.ts', 'node.ts', 'idb.ts', 'redis.ts'].map((file) => join(root, 'src', file)),
  config.options,
)
const checker = program.getTypeChecker()

/** The symbol `name` exported by the entry point `entry` (`src/<entry>`), its alias resolved. */
function exported(entry: string, name: string): ts.Symbol {
  const module = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'src', entry))!)!
  const symbol = checker.getExportsOfModule(module).find((candidate) => candidate.name === name)
  if (symbol === undefined) throw new Error(`src/${entry} exports no ${name}`)
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
}

const declaredType = (entry: string, name: string): ts.Type => checker.getDeclaredTypeOfSymbol(exported(entry, name))

/** The string literals of a type: its own value, or its union members'. */
function stringLiterals(type: ts.Type): string[] {
  const members = type.isUnion() ? type.types : [type]
  return members.flatMap((member) => (member.isStringLiteral() ? [member.value] : []))
}

interface Documented {
  name: string
  defaultValue: string | undefined
  /** The string values the property takes, when its type is a union of string literals (undefined aside). */
  values: string[]
}

/** Every property of an options interface (inherited ones too), named with `prefix`. */
function propertiesOf(entry: string, name: string, prefix = ''): Documented[] {
  return checker.getPropertiesOfType(declaredType(entry, name)).map((property) => {
    const tag = property.getJsDocTags(checker).find((candidate) => candidate.name === 'defaultValue')
    const type = checker.getTypeOfSymbol(property)
    return {
      name: `${prefix}${property.name}`,
      defaultValue: tag === undefined ? undefined : ts.displayPartsToString(tag.text),
      values: stringLiterals(type),
    }
  })
}

const plain = (text: string): string => text.replaceAll('`', '').trim()

/** The rows of a page's tables under `heading` whose first cell opens with a name in backticks, by that name. */
function rowsUnder(rows: TableRow[], heading: string): Map<string, TableRow> {
  return new Map(
    rows
      .filter((row) => row.heading === heading && codeIn(row.cells[0]!) !== undefined)
      .map((row) => [codeIn(row.cells[0]!)!, row]),
  )
}

describe('docs/options.md', () => {
  const rows = tableRows(read('docs/options.md'))
  const tables: [heading: string, entry: string, name: string, prefix: string][] = [
    ['The transport', 'index.ts', 'ResumableHTTPClientTransportOptions', ''],
    ['`reconnect`', 'index.ts', 'ReconnectOptions', 'reconnect.'],
    ["`reconnectionOptions`: the SDK's names", 'index.ts', 'StreamableHTTPReconnectionOptions', 'reconnectionOptions.'],
    ['`limits`', 'index.ts', 'LimitOptions', 'limits.'],
    ['`FileStore` (`mcp-resumable-http/node`)', 'node.ts', 'FileStoreOptions', ''],
    ['`IdbStore` (`mcp-resumable-http/idb`)', 'idb.ts', 'IdbStoreOptions', ''],
    ['`RedisStore` (`mcp-resumable-http/redis`)', 'redis.ts', 'RedisStoreOptions', ''],
  ]

  describe.each(tables)('the table under "%s"', (heading, entry, name, prefix) => {
    const properties = propertiesOf(entry, name, prefix)
    const table = rowsUnder(rows, heading)

    it(`has one row for every property of ${name}, and none for anything else`, () => {
      expect(properties.length).toBeGreaterThanOrEqual(2)
      expect([...table.keys()].sort()).toEqual(properties.map((property) => property.name).sort())
    })

    it("gives each default as the TSDoc's @defaultValue says it", () => {
      const disagreeing = properties.flatMap(({name: option, defaultValue}) => {
        const shown = plain(table.get(option)?.cells[1] ?? '')
        const tsdoc = plain(defaultValue ?? 'none')
        return tsdoc.startsWith(shown) || shown.startsWith(tsdoc)
          ? []
          : [`${option}: "${shown}", the TSDoc says "${tsdoc}"`]
      })
      expect(disagreeing).toEqual([])
    })

    it('names every value an option of a string union takes', () => {
      const missing = properties.flatMap(({name: option, values}) =>
        values
          .filter((value) => !table.get(option)?.cells.join(' ').includes(`'${value}'`))
          .map((value) => `${option}: '${value}'`),
      )
      expect(missing).toEqual([])
    })
  })

  it('lists exactly the options the transport accepts at run time', () => {
    let message = ''
    try {
      new ResumableHTTPClientTransport(new URL('https://mcp.example/mcp'), {'not an option': true} as never)
    } catch (error) {
      message = (error as Error).message
    }
    const accepted = /the options are (.*) \(/.exec(message)![1]!.split(', ')
    expect(accepted).toContain('store')
    expect(accepted.sort()).toEqual(
      propertiesOf('index.ts', 'ResumableHTTPClientTransportOptions')
        .map((property) => property.name)
        .sort(),
    )
  })
})

describe('docs/errors.md', () => {
  it('has one row for every code of TransportErrorCode, and none for anything else', () => {
    const codes = stringLiterals(declaredType('index.ts', 'TransportErrorCode'))
    expect(codes).toContain('not-sent')
    const table = tableRows(read('docs/errors.md')).filter((row) => row.cells.length === 5)
    expect(table.map((row) => codeIn(row.cells[0]!)).sort()).toEqual([...codes].sort())
  })
})

describe('docs/events.md', () => {
  const rows = tableRows(read('docs/events.md'))
  const members = (declaredType('index.ts', 'TransportEvent') as ts.UnionType).types.map((member) => {
    const fields = checker.getPropertiesOfType(member).map((property) => property.name)
    return {
      type: stringLiterals(checker.getTypeOfSymbol(member.getProperty('type')!))[0]!,
      fields: fields.filter((field) => field !== 'type'),
    }
  })

  it('has one row for every type of TransportEvent, and none for anything else', () => {
    expect(members.length).toBeGreaterThanOrEqual(20)
    const types = rows
      .filter((row) => row.cells.length === 3 && row.heading !== 'Metrics')
      .map((row) => codeIn(row.cells[0]!))
    expect(types.sort()).toEqual(members.map((member) => member.type).sort())
  })

  it('names every field of each event in its row', () => {
    const byType = new Map(rows.map((row) => [codeIn(row.cells[0]!), row.cells[1]!]))
    const missing = members.flatMap(({type, fields}) =>
      fields.filter((field) => !byType.get(type)?.includes(`\`${field}\``)).map((field) => `${type}.${field}`),
    )
    expect(missing).toEqual([])
  })

  it('has one row for every metric of TransportMetrics', () => {
    const metrics = checker
      .getPropertiesOfType(declaredType('index.ts', 'TransportMetrics'))
      .map((property) => property.name)
    expect([...rowsUnder(rows, 'Metrics').keys()].sort()).toEqual(metrics.sort())
  })
})

describe('docs/migration.md', () => {
  it('names every option and public member of the SDK transport', () => {
    const declarations = read('node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts')
    const between = (start: string, end: RegExp): string => {
      const from = declarations.indexOf(start)
      return declarations.slice(from, from + end.exec(declarations.slice(from))!.index)
    }
    const options = [
      ...between('export type StreamableHTTPClientTransportOptions = {', /^\};/m).matchAll(/^ {4}(\w+)\?:/gm),
    ].map((match) => `opts.${match[1]!}`)
    const members = [
      ...between('export declare class StreamableHTTPClientTransport ', /^\}/m).matchAll(
        /^ {4}(?!private )(?:get |set )?(\w+)\??[(:]/gm,
      ),
    ]
      .map((match) => match[1]!)
      .filter((name) => name !== 'constructor')
    expect(options).toContain('opts.reconnectionOptions')
    expect(members).toContain('resumeStream')
    const firstColumn = tableRows(read('docs/migration.md'))
      .map((row) => row.cells[0]!)
      .join(' ')
    expect(
      [...options, ...members].filter((name) => !new RegExp(`\`${name.replace('.', '\\.')}[\`(]`).test(firstColumn)),
    ).toEqual([])
  })
})

describe('the API reference (npm run docs)', () => {
  it('documents every entry point the package exports: typedoc.json lists the source of each', () => {
    const {exports} = JSON.parse(read('package.json')) as {exports: Record<string, {default: string}>}
    const sources = Object.values(exports)
      .filter((entry) => typeof entry === 'object' && entry.default.endsWith('.js'))
      .map((entry) => entry.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'))
    const {entryPoints} = JSON.parse(read('typedoc.json')) as {entryPoints: string[]}
    expect(sources.length).toBeGreaterThan(5)
    expect([...entryPoints].sort()).toEqual(sources.sort())
  })
})
