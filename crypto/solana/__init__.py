"""Real Solana over JSON-RPC: the node client, the deposit scanner, the transactions the service
signs (signed again with a new blockhash once one expired unseen) and the sweeps of deposit
token accounts. Only the Solana gateway (``crypto.chains.solana``) and its tasks use this
package; the domain services talk to the gateway protocol."""
