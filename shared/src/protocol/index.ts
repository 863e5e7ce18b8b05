export * from "./signer.js"
