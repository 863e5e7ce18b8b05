import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { dashboardPolicy } from './dashboardPolicy.js'

const here = path.dirname(fileURLToPath(import.meta.url))

describe('dashboardPolicy', () => {
  it("allows the page's inline scripts by hash, never 'unsafe-inline' scripts, and nothing from elsewhere", () => {
    const html = '<p>x</p><script>let a = 1</script><script>\nlet b = "é"\n</script>'
    const policy = dashboardPolicy(html)
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`
    expect(policy).toContain(`script-src ${hash('let a = 1')} ${hash('\nlet b = "é"\n')};`)
    expect(policy.split('; ').find((d) => d.startsWith('script-src'))).not.toContain('unsafe')
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("frame-ancestors 'none'")
  })

  it('refuses a page without an inline script (a renamed or moved script would otherwise be blocked silently)', () => {
    expect(() => dashboardPolicy('<p>no script</p>')).toThrow(/no inline script/)
  })

  it('covers the real dashboard: one inline script, no inline event-handler attributes a hash cannot allow', () => {
    const html = readFileSync(path.resolve(here, '../../public/approval-ui.html'), 'utf8')
    expect(dashboardPolicy(html)).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*';/)
    expect(html).not.toMatch(/\son[a-z]+\s*=/i)
    expect(html).not.toMatch(/<script\s+src=/i)
  })
})
