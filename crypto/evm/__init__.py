"""Real EVM chains (ETH, BSC) over JSON-RPC: the node client, the deposit scanner, the
transactions the service signs (nonces, resends, fee bumps) and the sweeps of deposit addresses.
Only the EVM gateway (``crypto.chains.evm``) and its tasks use this package; the domain services
talk to the gateway protocol."""
