// Classes: private fields, static members, getters, inheritance, this.constructor.
export class Ledger {
  #entries = []
  static currency = 'ETH'

  constructor(owner) {
    this.owner = owner
  }

  add(amount, note = '') {
    this.#entries.push({ amount, note, at: this.#entries.length })
    return this
  }

  get total() {
    return this.#entries.reduce((sum, e) => sum + e.amount, 0n)
  }

  describe() {
    return `${this.constructor.name}(${this.owner}): ${this.total} ${Ledger.currency}`
  }

  clone() {
    const copy = new this.constructor(this.owner)
    for (const e of this.#entries) copy.add(e.amount, e.note)
    return copy
  }
}

export class CappedLedger extends Ledger {
  constructor(owner, cap) {
    super(owner)
    this.cap = cap
  }

  add(amount, note) {
    if (this.total + amount > this.cap) throw new RangeError('cap exceeded')
    return super.add(amount, note)
  }

  static from(json) {
    const obj = JSON.parse(json)
    return new CappedLedger(obj.owner, BigInt(obj.cap))
  }
}

export const demo = new CappedLedger('alice', 10n).add(3n).add(4n, 'rent').describe()
