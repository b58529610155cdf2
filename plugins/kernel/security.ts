/** Sealing secrets at rest, the Flows endpoint's encryption, the Cloud API's request signature. */
export type { SecretBox } from '../../adapters/crypto/secret-box.ts';
export { FlowDecryptionError, asEncryptedFlowRequest, decryptFlowRequest, encryptFlowResponse, generateFlowKeyPair } from '../../adapters/crypto/flow-encryption.ts';
export { isAuthentic } from '../../adapters/drivers/cloud-api/signature.ts';
