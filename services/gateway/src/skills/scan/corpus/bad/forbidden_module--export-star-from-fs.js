// Re-exporting fs hands it to another file of the skill.
export * from 'fs'
