// Which modules a parsed skill file asks for: static `import`/`export ... from`,
// `import()` and `require()` with a constant specifier. The resolver
// (../imports/resolveImports.ts) turns these into files that must be declared.
// A specifier that is not a constant is the analyser's business (it rejects
// it as dynamic_import); here it is simply not listed.
import type * as acorn from 'acorn'
import * as walk from 'acorn-walk'

export type ModuleRequestKind = 'import' | 'require'

export interface ModuleRequest {
  kind: ModuleRequestKind
  specifier: string
}

/** A string the expression always evaluates to: literals, plain templates, and `+` of those. */
function constantString(node: acorn.AnyNode | null | undefined): string | null {
  if (!node) return null
  if (node.type === 'Literal') return typeof node.value === 'string' ? node.value : null
  if (node.type === 'TemplateLiteral') {
    if (node.expressions.length > 0) return null
    return node.quasis.map((q) => q.value.cooked ?? '').join('')
  }
  if (node.type === 'BinaryExpression' && node.operator === '+') {
    const left = constantString(node.left as acorn.AnyNode)
    const right = constantString(node.right)
    return left !== null && right !== null ? left + right : null
  }
  return null
}

/** `require` and `module.require`: the CommonJS loaders a skill can name. */
function isRequireCallee(callee: acorn.AnyNode): boolean {
  if (callee.type === 'Identifier') return callee.name === 'require'
  if (callee.type === 'MemberExpression' && !callee.computed && callee.object.type === 'Identifier' && callee.property.type === 'Identifier') {
    return callee.object.name === 'module' && callee.property.name === 'require'
  }
  return false
}

export function moduleRequests(program: acorn.Program): ModuleRequest[] {
  const out: ModuleRequest[] = []
  const add = (kind: ModuleRequestKind, node: acorn.AnyNode | null | undefined) => {
    const specifier = constantString(node)
    if (specifier !== null) out.push({ kind, specifier })
  }
  walk.full(program, (node) => {
    switch (node.type) {
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
        add('import', node.source)
        break
      case 'ExportNamedDeclaration':
        if (node.source) add('import', node.source)
        break
      case 'ImportExpression':
        add('import', node.source)
        break
      case 'CallExpression':
        if (node.callee.type !== 'Super' && isRequireCallee(node.callee) && node.arguments[0] && node.arguments[0].type !== 'SpreadElement') add('require', node.arguments[0])
        break
      default:
        break
    }
  })
  // One entry per kind and specifier, in the order of first appearance.
  const seen = new Set<string>()
  return out.filter((r) => {
    const key = `${r.kind}\0${r.specifier}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
