import { useEffect, useRef } from 'preact/hooks';

/**
 * A scrolling message list that keeps its newest message in view when one arrives, and only
 * then: not when older messages are added above, nor on a re-read that changes nothing new.
 */
export function useStickToNewest<T extends HTMLElement>(newestId: string | undefined) {
  const scroller = useRef<T>(null);
  useEffect(() => {
    const list = scroller.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [newestId]);
  return scroller;
}
