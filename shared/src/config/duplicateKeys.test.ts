import { describe, expect, it } from 'vitest'
import { duplicateJsonKey } from './duplicateKeys.js'

describe('duplicateJsonKey', () => {
  it.each([
    ['{"maxValueWei":"1","maxValueWei":"2"}', 'policy/maxValueWei'],
    ['{"a":{"b":1,"c":{"d":1,"d":2}}}', 'policy/a/c/d'],
    ['{"operators":[{"name":"a","tokenSha256":"x","tokenSha256":"y"}]}', 'policy/operators/0/tokenSha256'],
    ['{"list":[{"n":1},{"n":2,"n":3}]}', 'policy/list/1/n'],
    ['{"k\\u0061":1,"ka":2}', 'policy/ka'],
  ])('finds the duplicate in %s', (text, path) => {
    expect(duplicateJsonKey(text, 'policy')).toBe(path)
  })

  it.each([
    '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}',
    '{"text":"a \\"quoted\\" , { [ name","a":"}"}',
    '[1,2,{"x":1}]',
    '"just a string"',
  ])('finds none in %s', (text) => {
    expect(duplicateJsonKey(text, 'policy')).toBeNull()
  })
})
