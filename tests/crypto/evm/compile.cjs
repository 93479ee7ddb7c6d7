// Compiles the Solidity sources named on the command line with solcjs (the official compiler as
// WebAssembly) and prints {contractName: {abi, bytecode}} as JSON; errors go to stderr, exit 1.
const fs = require("node:fs");
const path = require("node:path");
const solc = require("solc");

const sources = {};
for (const file of process.argv.slice(2)) {
  sources[path.basename(file)] = { content: fs.readFileSync(file, "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const error of errors) console.error(error.formattedMessage);
  process.exit(1);
}
const contracts = {};
for (const file of Object.values(output.contracts)) {
  for (const [name, contract] of Object.entries(file)) {
    contracts[name] = { abi: contract.abi, bytecode: "0x" + contract.evm.bytecode.object };
  }
}
process.stdout.write(JSON.stringify(contracts));
