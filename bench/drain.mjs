/** Resolves when `res` can take more (drain) or is gone (close): a server never buffers what the client does not read. */
export function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}
