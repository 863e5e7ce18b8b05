import { describe, expect, it } from 'vitest'
import { duplicateJsonKey } from './duplicateKeys.js'

describe('duplicateJsonKey', () => {
  it.each([
    ['{"maxValueWei":"1","maxValueWei":"2"}', 'policy/maxValueWei'],
    ['{"a":{"b":1,"c":{"d":1,"d":2}}}', 'policy/a/c/d'],
    ['{"operators":[{"name":"a","tokenSha256":"x","tokenSha256":"y"}]}', 'policy/operators/0/tokenSha256'],
    ['{"list":[{"n":1},{"n":2,"n":3}]}', 'policy/list/1/n'],
    ['{"k\\u0061":1,"ka":2}', 'policy/ka'],
    ['{"q\\"":1,"q\\"":2}', 'policy/q"'],
    ['{ "a" : "b" , "a" : [] }', 'policy/a'],
    [`{"big":{${Array.from({ length: 40 }, (_, n) => `"k${n}":${n}`).join(',')},"k3":0}}`, 'policy/big/k3'],
  ])('finds the duplicate in %s', (text, path) => {
    expect(duplicateJsonKey(text, 'policy')).toBe(path)
  })

  it.each([
    '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}',
    '{"text":"a \\"quoted\\" , { [ name","a":"}"}',
    '[1,2,{"x":1}]',
    '"just a string"',
    '{}',
    `{${Array.from({ length: 40 }, (_, n) => `"k${n}":{"k${n}":[{"k${n}":1}]}`).join(',')}}`,
  ])('finds none in %s', (text) => {
    expect(duplicateJsonKey(text, 'policy')).toBeNull()
  })
})
