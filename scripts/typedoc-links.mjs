// A TypeDoc plugin (typedoc.json): the API reference is read on the npm page and in editors, where the package ships no
// docs/ folder, so a TSDoc comment must point at a document of the repository by its absolute GitHub URL. Every
// mention of `docs/….md` in the text of a documented comment that is not such a URL is a warning, which `npm run docs`
// (treatWarningsAsErrors) turns into a failure.
import {Comment, Converter} from 'typedoc'

const repository = 'https://github.com/mcp-resumable-http/mcp-resumable-http/blob/main/'
const mention = /docs\/[\w-]+\.md(?:#[\w-]+)?/g

/** The text of `parts` that a reader sees as plain text: link targets and their labels left out. */
function plainText(parts) {
  return parts
    .filter((part) => part.kind === 'text' || part.kind === 'code')
    .map((part) => part.text.replace(/\[[^\]]*\]\(https:[^)]*\)/g, ''))
    .join('')
}

/** The relative mentions of a document in `comment`: plain text, and links whose target is not absolute. */
function relativeMentions(comment) {
  const parts = [...comment.summary, ...comment.blockTags.flatMap((tag) => tag.content)]
  const found = [...plainText(parts).matchAll(mention)].map(([text]) => text)
  for (const part of parts) {
    const target =
      part.kind === 'relative-link'
        ? part.text
        : part.kind === 'inline-tag' && typeof part.target === 'string'
          ? part.target
          : undefined
    if (target !== undefined && mention.test(target) && !target.startsWith(repository)) found.push(target)
    mention.lastIndex = 0
  }
  return found
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const reflection of Object.values(context.project.reflections)) {
      if (reflection.comment === undefined) continue
      for (const text of relativeMentions(reflection.comment)) {
        app.logger.warn(
          `${reflection.getFriendlyFullName()}: "${text}" is not shipped with the package: link it as ${repository}${text} (${Comment.combineDisplayParts(reflection.comment.summary).slice(0, 60)}…)`,
        )
      }
    }
  })
}
