/**
 * The official MCP conformance suite, `@modelcontextprotocol/conformance` 0.1.16 (its stable line), grades
 * conformance/client.ts: the SDK `Client` 1.32 on this transport. Each scenario's
 * checks must all succeed: a FAILURE or a WARNING fails the test.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {buildConformanceClient, failuresOf, type ConformanceRun} from '../fixtures/conformance.ts'

const scenarios = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry']

let conformance: ConformanceRun

beforeAll(async () => {
  conformance = await buildConformanceClient('node_modules/@modelcontextprotocol/conformance/dist/index.js')
}, 120_000)

afterAll(async () => {
  await conformance.remove()
})

describe('MCP conformance suite 0.1.16, client scenarios, with this transport in the SDK Client', () => {
  it.concurrent.each(scenarios)(
    '%s passes',
    async (scenario) => {
      const graded = await conformance.grade(scenario)
      const {graded: count, failed} = failuresOf(graded)
      expect(failed).toEqual([])
      expect(count).toBeGreaterThan(0)
      expect(graded.exitCode).toBe(0)
    },
    60_000,
  )
})
