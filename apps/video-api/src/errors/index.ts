export { VIDEO_API_ERROR_CODES, VideoApiError, type VideoApiErrorCode } from './video_api_error.js'
