/**
 * The event IDs a stream saw lately, to drop replayed duplicates: at least the last `capacity` IDs (and at least
 * `maxBytes / 2` characters of them), at most twice that, in two generations, the older dropped whole when the
 * newer fills. O(1) per event, allocating only while a young stream grows to `capacity` (and once, for the tables).
 *
 * Most servers number their events in order, and an ID that comes after every ID seen so far (longer, or as long
 * and greater) is none of them: such an ID is only appended, without a look-up. The first ID out of that order
 * builds the look-up tables from what is held (O(capacity), once), and from then on every ID is looked up.
 *
 * Why not a `Set`: this runs once per event, amid the garbage of parsing every event. A `Set` of fresh strings
 * costs several times its bare speed there (each insert into a long-lived table of young strings is work for the
 * garbage collector), which was most of what this transport spent per event above a bare parser. Here the IDs sit
 * in one array and are found through tables of 32-bit hashes. The hash is seeded per process so that a server
 * cannot choose IDs that collide, a long search gives up (see {@link maxProbes}), and a hash match is confirmed by
 * comparing the IDs: a collision can cost a probe, never drop a new event.
 */
export class SeenEventIds {
  readonly #maxCapacity: number
  readonly #halfBytes: number
  /** IDs per generation: starts small, so that the many short streams of a busy session stay light. */
  #capacity = 0
  #mask = 0
  /**
   * Per generation, made once {@link #indexed}: open addressing, at most a quarter full; 0 for empty, else 1 +
   * the index of the ID in {@link #ids}.
   */
  #tables: [Int32Array, Int32Array] = [new Int32Array(0), new Int32Array(0)]
  /** Generation `g` holds its IDs from `g * capacity` on, in arrival order. */
  #ids: string[] = []
  /** The generation IDs are added to; the other is the older one. */
  #current: 0 | 1 = 0
  // Stryker disable next-line ArrayDeclaration: #resize in the constructor sets it
  readonly #counts: [number, number] = [0, 0]
  /** The characters of the current generation's IDs. */
  #bytes = 0
  /** The last ID added while every one came after the one before: the greatest held. */
  // Stryker disable next-line StringLiteral: the look-up answers the same
  #highest = ''
  /** An ID came out of order: the tables hold every ID held, and every ID is looked up. */
  // Stryker disable next-line BooleanLiteral: the look-up answers the same, only slower
  #indexed = false
  /** Called when a generation is dropped because of its weight, not its count. */
  onOverweight: (() => void) | undefined

  constructor(capacity: number, maxBytes: number) {
    this.#maxCapacity = capacity
    this.#halfBytes = maxBytes / 2
    this.#resize(Math.min(8, capacity))
  }

  /** Adds `id` unless it is remembered already; true when it was new. */
  addIfNew(id: string): boolean {
    let hash = 0
    let slot = 0
    // Stryker disable next-line ConditionalExpression: the look-up answers the same, only slower
    if (!this.#indexed && comesAfter(id, this.#highest)) this.#highest = id
    else {
      if (!this.#indexed) this.#index()
      hash = hashOf(id)
      if (this.#find(this.#current ^ 1, hash, id) >= 0) return false
      slot = this.#find(this.#current, hash, id)
      if (slot >= 0) return false
    }
    const count = this.#counts[this.#current]
    // Stryker disable next-line ConditionalExpression: no room needs IDs made to collide
    if (slot === noRoom || count >= this.#capacity || this.#bytes >= this.#halfBytes) {
      // Stryker disable next-line ConditionalExpression,LogicalOperator: no room needs IDs made to collide
      if (
        slot !== noRoom &&
        count >= this.#capacity &&
        this.#capacity < this.#maxCapacity &&
        this.#bytes < this.#halfBytes
      ) {
        this.#resize(Math.min(this.#capacity * 2, this.#maxCapacity))
      } else {
        // Stryker disable next-line ConditionalExpression: no room needs IDs made to collide
        this.#rotate(slot !== noRoom && count < this.#maxCapacity)
      }
      // Stryker disable next-line ConditionalExpression: before the tables are made, the answer goes unused
      if (this.#indexed) slot = this.#find(this.#current, hash, id)
    }
    const index = this.#append(id)
    // Stryker disable next-line ConditionalExpression: a typed array ignores a write at index -1
    if (this.#indexed) this.#tables[this.#current][-1 - slot] = index + 1
    this.#bytes += id.length
    return true
  }

  /**
   * The slot holding `id` in generation `generation`, or `-1 - slot` for the empty slot where it would go, or
   * {@link noRoom} past {@link maxProbes}: IDs made to collide then cost a generation, not a long search.
   */
  #find(generation: number, hash: number, id: string): number {
    const table = this.#tables[generation]!
    let slot = hash & this.#mask
    // Stryker disable next-line UpdateOperator,ArithmeticOperator,EqualityOperator: as consistent backwards
    for (let probe = 0; probe < maxProbes; probe++, slot = (slot + 1) & this.#mask) {
      const entry = table[slot]!
      if (entry === 0) return -1 - slot
      if (this.#ids[entry - 1] === id) return slot
    }
    return noRoom
  }

  /** Adds `id` to the current generation; returns its index in {@link #ids}. */
  #append(id: string): number {
    const index = this.#current * this.#capacity + this.#counts[this.#current]++
    this.#ids[index] = id
    return index
  }

  /** The older generation is forgotten and becomes the new, empty one; `overweight`: because of its weight. */
  #rotate(overweight: boolean): void {
    if (overweight) this.onOverweight?.()
    this.#current = this.#current === 0 ? 1 : 0
    // Stryker disable next-line ConditionalExpression: before the tables are made, they are empty
    if (this.#indexed) this.#tables[this.#current].fill(0)
    // Released for the garbage collector: a forgotten ID may be large.
    // Stryker disable next-line StringLiteral,ArithmeticOperator,CallExpression: it only releases memory
    this.#ids.fill('', this.#current * this.#capacity, (this.#current + 1) * this.#capacity)
    this.#counts[this.#current] = 0
    this.#bytes = 0
  }

  /** Room for `capacity` IDs per generation, keeping those held. */
  #resize(capacity: number): void {
    const held = [0, 1].map((generation) =>
      this.#ids.slice(generation * this.#capacity, generation * this.#capacity + this.#counts[generation]!),
    )
    let size = 4
    while (size < capacity * 4) size *= 2
    this.#capacity = capacity
    this.#mask = size - 1
    // Stryker disable next-line StringLiteral: it only releases memory
    this.#ids = new Array<string>(capacity * 2).fill('')
    for (const generation of [0, 1] as const) {
      this.#counts[generation] = 0
      for (const id of held[generation]!) this.#ids[generation * capacity + this.#counts[generation]++] = id
    }
    if (this.#indexed) this.#link()
  }

  /** From now on every ID is looked up: the tables are built from the IDs held. */
  #index(): void {
    this.#indexed = true
    this.#link()
  }

  /** New tables, holding the IDs held. */
  #link(): void {
    // Stryker disable next-line ArithmeticOperator: slots past a shorter table's end are never taken
    this.#tables = [new Int32Array(this.#mask + 1), new Int32Array(this.#mask + 1)]
    for (const generation of [0, 1] as const) {
      const table = this.#tables[generation]
      const first = generation * this.#capacity
      for (let index = first; index < first + this.#counts[generation]; index++) {
        const id = this.#ids[index]!
        const slot = this.#find(generation, hashOf(id), id)
        // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: needs IDs made to collide
        if (slot !== noRoom && slot < 0) table[-1 - slot] = index + 1
      }
    }
  }
}

/** `id` comes after `highest` when longer, or as long and greater: how IDs numbered in order follow each other. */
// Stryker disable next-line BlockStatement: an ID taken as out of order is looked up
function comesAfter(id: string, highest: string): boolean {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: an ID taken as out of order is looked up
  return id.length > highest.length || (id.length === highest.length && id > highest)
}

/** Slots looked at for one ID at most; a table at most a quarter full needs one or two. */
const maxProbes = 32
const noRoom = -(2 ** 31)

/** Per process, so that the hashes a server's IDs get cannot be known in advance. */
const seed = (Math.random() * 2 ** 32) >>> 0

/** FNV-1a over the UTF-16 code units of `text`, from {@link seed}, its bits mixed (MurmurHash3's finalizer). */
function hashOf(text: string): number {
  let hash = seed ^ 0x811c9dc5
  // Stryker disable next-line EqualityOperator: hash ^ NaN is hash ^ 0: another consistent hash
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193)
  // FNV's low bits, which pick the slot, vary little between IDs that differ in their last characters.
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  return hash ^ (hash >>> 16)
}
