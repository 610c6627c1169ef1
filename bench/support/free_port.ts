export { freePort } from '@floodgate/test-support'
