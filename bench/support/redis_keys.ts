export { deleteByPrefix, type KeyScanner } from '@floodgate/test-support'
