use crate::TestPage;

/// Content that escapes the card it is in (and so runs over the next one), on
/// any viewport.
pub async fn escaped_content(page: &TestPage) -> anyhow::Result<Vec<String>> {
    let problems: Vec<String> = page
        .evaluate(
            r#"() => {
                const problems = [];
                for (const card of document.querySelectorAll('.card')) {
                    const frame = card.getBoundingClientRect();
                    for (const element of card.querySelectorAll('*')) {
                        // Not drawn (display: none, or inside a closed <details>).
                        if (!element.checkVisibility()) continue;
                        const rect = element.getBoundingClientRect();
                        if (rect.width === 0 || rect.height === 0) continue;
                        if (rect.bottom > frame.bottom + 0.5 || rect.right > frame.right + 0.5) {
                            problems.push(`${element.tagName.toLowerCase()} "${element.textContent.trim().slice(0, 30)}" runs out of its card (${rect.bottom}px below a card that ends at ${frame.bottom}px)`);
                        }
                    }
                }
                return problems;
            }"#,
            None::<&()>,
        )
        .await?;
    Ok(problems)
}

/// What the phone rules measure on one page, and content that escapes its card.
pub async fn phone_layout_problems(page: &TestPage) -> anyhow::Result<Vec<String>> {
    let mut problems: Vec<String> = page
        .evaluate(
            r#"() => {
                const problems = [];
                const root = document.documentElement;
                if (root.scrollWidth > window.innerWidth) {
                    problems.push(`document is ${root.scrollWidth}px wide in a ${window.innerWidth}px viewport`);
                }
                for (const element of document.querySelectorAll('body *')) {
                    const style = getComputedStyle(element);
                    const scrolls = /(auto|scroll)/.test(style.overflowY + style.overflowX);
                    if (scrolls && (element.scrollHeight > element.clientHeight || element.scrollWidth > element.clientWidth)) {
                        problems.push(`${element.tagName.toLowerCase()} scrolls on its own`);
                    }
                    const rect = element.getBoundingClientRect();
                    if (rect.right > window.innerWidth + 0.5) {
                        problems.push(`${element.tagName.toLowerCase()} "${element.textContent.trim().slice(0, 30)}" ends at ${rect.right}px`);
                    }
                }
                // A checkbox or radio is operated through its label; a link
                // inside a sentence is exempt, as WCAG's target-size rule says.
                const controls = document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary');
                for (const control of controls) {
                    if (control.matches('p a')) continue;
                    const target = control.matches('input[type=checkbox], input[type=radio]') && control.closest('label') || control;
                    const rect = target.getBoundingClientRect();
                    const hidden = rect.width === 0 || rect.right < 0 || getComputedStyle(control).visibility === 'hidden';
                    if (!hidden && rect.height < 44) {
                        problems.push(`${control.tagName.toLowerCase()} "${(control.textContent || control.name || '').trim().slice(0, 30)}" is ${rect.height}px tall`);
                    }
                }
                return problems;
            }"#,
            None::<&()>,
        )
        .await?;
    problems.extend(escaped_content(page).await?);
    Ok(problems)
}
